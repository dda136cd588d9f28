"""What the solutions' results share: frozen dataclasses of numpy arrays (each solution's
own result class lives in its module, engine/vision/solutions/).

Coordinates come twice: in frame pixels (`*_px`) and normalised by the frame size
(x / width, y / height; MediaPipe's convention, z / width for landmarks). Boxes are
(xmin, ymin, xmax, ymax). With `output="gpu"` the numpy fields are None and `gpu` holds the
buffers the results live in (valid until the next `process()` is submitted). `backend` says
which backend ran the models (engine/vision/backends).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Detection:
    """One detection: score, box and keypoints (BlazeFace's 6: right eye, left eye, nose
    tip, mouth centre, right ear tragion, left ear tragion, the subject's right and left;
    a palm's 7, a body's 4)."""

    score: float
    box: np.ndarray  # (4,) normalised xmin, ymin, xmax, ymax
    box_px: np.ndarray  # (4,) pixels
    keypoints: np.ndarray  # (K, 2) normalised
    keypoints_px: np.ndarray  # (K, 2) pixels

    @property
    def width_px(self) -> float:
        return float(self.box_px[2] - self.box_px[0])

    @property
    def height_px(self) -> float:
        return float(self.box_px[3] - self.box_px[1])


@dataclass(frozen=True)
class Classification:
    """MediaPipe's Classification: a class index, its score and its label."""

    index: int
    score: float
    label: str
