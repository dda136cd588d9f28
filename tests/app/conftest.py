"""App test helpers: the sample clip, reference masks/detections, video reading."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from tests.conftest import ASSETS_DIR

SAMPLE = ASSETS_DIR / "sample.mp4"


def sample_clip():
    if not SAMPLE.exists():
        pytest.skip(f"{SAMPLE} missing: run `make assets`")
    return SAMPLE


def read_video(path, limit: int | None = None) -> list[np.ndarray]:
    """Every frame (BGR) of a video, up to `limit`."""
    cap = cv2.VideoCapture(str(path))
    frames = []
    while limit is None or len(frames) < limit:
        ok, frame = cap.read()
        if not ok:
            break
        frames.append(frame)
    cap.release()
    return frames


def reference_mask(graph, bgr: np.ndarray) -> np.ndarray:
    """Selfie segmentation on the reference interpreter: CPU stretch to the input, [0, 1]."""
    from engine.reference import Interpreter

    t = graph.tensors[graph.inputs[0]]
    _, h, w, _ = t.shape
    rgb = cv2.resize(bgr[:, :, ::-1], (w, h), interpolation=cv2.INTER_LINEAR)
    x = (rgb.astype(np.float32) / 255.0)[None]
    (out,) = Interpreter(graph).run({t.name: x}).values()
    return out.reshape(h, w)


def reference_faces(graph, bgr: np.ndarray):
    """BlazeFace on the reference interpreter (CPU letterbox), detections in frame pixels."""
    from engine.reference import Interpreter
    from engine.vision.blazeface import detect_faces, letterbox

    tensor, m = letterbox(bgr[:, :, ::-1].copy(), (128, 128))
    out = Interpreter(graph).run({"input": tensor})
    return detect_faces(out["regressors"], out["classificators"], m)


def frame_diff(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Per-pixel mean absolute difference of two BGR frames (H, W) float."""
    return np.abs(a.astype(np.float32) - b.astype(np.float32)).mean(axis=2)
