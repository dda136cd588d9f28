"""Media helpers: the sample clip, video reading, reference masks and detections."""

from __future__ import annotations

import cv2
import numpy as np

from tests.helpers.ci import missing
from tests.helpers.files import ROOT

# The clips the fidelity references were made from, kept in the repository. `make assets`
# copies them into assets/, but an assets/ made before (a render, whose frames follow the
# CPU that made it) would give other frames: the tests read the kept files.
KEPT = ROOT / "tests" / "data" / "mediapipe"
SAMPLE = KEPT / "sample.mp4"
PEOPLE = KEPT / "people.mp4"


def sample_clip():
    """The sample clip (the astronaut, panning and zooming; engine/catalog/samples.py)."""
    if not SAMPLE.exists():
        missing(f"{SAMPLE} missing: it is kept in the repository")
    return SAMPLE


def people_clip():
    """The second sample clip (several people, shot changes; engine/catalog/people.py)."""
    if not PEOPLE.exists():
        missing(f"{PEOPLE} missing: it is kept in the repository")
    return PEOPLE


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
    """Selfie segmentation on the reference interpreter: the numpy stretch to the input
    (MediaPipe's image-to-tensor, BORDER_ZERO), [0, 1]."""
    from engine.reference import Interpreter
    from engine.vision.image_to_tensor import image_to_tensor, stretch_matrix

    t = graph.tensors[graph.inputs[0]]
    _, h, w, _ = t.shape
    rgb = np.ascontiguousarray(bgr[:, :, ::-1])
    m = stretch_matrix((rgb.shape[1], rgb.shape[0]))
    x = image_to_tensor(rgb, m, (w, h), (0.0, 1.0), "zero")
    (out,) = Interpreter(graph).run({t.name: x}).values()
    return out.reshape(h, w)


def reference_faces(graph, bgr: np.ndarray):
    """BlazeFace on the reference interpreter (CPU letterbox), detections in frame pixels."""
    from engine.reference import Interpreter
    from engine.vision.ssd import detect_faces, letterbox

    tensor, m = letterbox(bgr[:, :, ::-1].copy(), (128, 128))
    out = Interpreter(graph).run({"input": tensor})
    return detect_faces(out["regressors"], out["classificators"], m)


def frame_diff(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Per-pixel mean absolute difference of two BGR frames (H, W) float."""
    return np.abs(a.astype(np.float32) - b.astype(np.float32)).mean(axis=2)
