"""SSD detector options and anchors (MediaPipe's SsdAnchorsCalculator), shared by the
GPU decoder (engine/vision/detections.py) and the numpy reference pipeline
(engine/vision/ssd.py). Defaults: BlazeFace short range (docs/models.md)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class SsdSpec:
    """SSD anchor + decode options of one MediaPipe detector (defaults: BlazeFace short range)."""

    input_size: tuple[int, int] = (128, 128)  # (width, height)
    strides: tuple[int, ...] = (8, 16, 16, 16)
    anchor_offset: float = 0.5
    interpolated_scale_aspect_ratio: float = 1.0  # > 0 adds a second anchor per layer
    scale: float = 128.0  # x/y/w/h scale of the raw regressors
    num_keypoints: int = 6
    score_clip: float = 100.0
    min_score: float = 0.5
    iou_threshold: float = 0.3

    @classmethod
    def from_manifest(cls, post: dict) -> SsdSpec:
        """Build from a manifest entry's `postprocess` dict (kind "ssd")."""
        a, d, n = post["anchors"], post["decode"], post["nms"]
        return cls(
            input_size=(int(a["input_size"][0]), int(a["input_size"][1])),
            strides=tuple(int(s) for s in a["strides"]),
            anchor_offset=float(a["offset"]),
            interpolated_scale_aspect_ratio=float(a["interpolated_scale_aspect_ratio"]),
            scale=float(d["scale"]),
            num_keypoints=int(d["num_keypoints"]),
            score_clip=float(d["score_clip"]),
            min_score=float(d["min_score"]),
            iou_threshold=float(n["iou_threshold"]),
        )


BLAZEFACE_SHORT = SsdSpec()


def ssd_anchors(spec: SsdSpec = BLAZEFACE_SHORT) -> np.ndarray:
    """[N, 4] anchors (cx, cy, w, h), normalised; fixed anchor size, so w = h = 1.

    Consecutive layers with equal strides share one grid: per cell, each such layer adds one
    anchor per aspect ratio (1.0) plus one interpolated anchor when
    interpolated_scale_aspect_ratio > 0. Grid = ceil(input / stride).
    """
    width, height = spec.input_size
    per_layer = 2 if spec.interpolated_scale_aspect_ratio > 0 else 1
    out = []
    i = 0
    while i < len(spec.strides):
        stride = spec.strides[i]
        j = i
        while j < len(spec.strides) and spec.strides[j] == stride:
            j += 1
        n = (j - i) * per_layer
        gw, gh = -(-width // stride), -(-height // stride)
        ys, xs = np.meshgrid(np.arange(gh), np.arange(gw), indexing="ij")
        cx = (xs + spec.anchor_offset) / gw
        cy = (ys + spec.anchor_offset) / gh
        centres = np.stack([cx, cy], axis=-1).reshape(-1, 1, 2).repeat(n, axis=1).reshape(-1, 2)
        out.append(np.hstack([centres, np.ones_like(centres)]))
        i = j
    return np.concatenate(out).astype(np.float32)
