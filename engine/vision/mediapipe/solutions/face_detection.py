"""MediaPipe Face Detection (mp.solutions.face_detection) on engine.vision.FaceDetector.

- input: RGB uint8 images (H, W, 3), one at a time
- output: SolutionOutputs(detections): a list of Detection messages, best first (label_id
  0, score, location_data in RELATIVE_BOUNDING_BOX format: the box as xmin, ymin, width,
  height and the six FaceKeyPoint keypoints, normalised), None when no face
- options: MediaPipe's; model_selection=1 (full range) where the native FaceDetector has
  it; engine options: engine_options() (solution_base.py)
- usage:
    with mp.solutions.face_detection.FaceDetection(model_selection=0) as fd:
        for d in fd.process(rgb).detections or []:
            box = d.location_data.relative_bounding_box
"""

from __future__ import annotations

import numpy as np

from engine.vision import FaceDetector as _FaceDetector
from engine.vision.connections import FaceKeyPoint
from engine.vision.mediapipe import messages as _messages
from engine.vision.mediapipe import solution_base as _base
from engine.vision.mediapipe.solution_base import SolutionBase

__all__ = ["FaceDetection", "FaceKeyPoint", "SolutionBase", "get_key_point"]


def get_key_point(detection, key_point_enum: FaceKeyPoint):
    """A convenience method to return a face key point by the FaceKeyPoint type: a
    RelativeKeypoint message, or None without a detection."""
    if not detection or not detection.location_data:
        return None
    return detection.location_data.relative_keypoints[key_point_enum]


class FaceDetection(SolutionBase):
    """MediaPipe Face Detection: an RGB image -> the detected faces' location data."""

    def __init__(self, min_detection_confidence=0.5, model_selection=0):
        """min_detection_confidence: [0.0, 1.0], accepted and, as in MediaPipe 0.10.14,
        without effect: each model runs at its graph's threshold (0.5 short range, 0.6 full
        range; measured on MediaPipe's own); model_selection: 0 (short range, faces within
        2 m) or 1 (full range, within 5 m)."""
        if not 0.0 <= min_detection_confidence <= 1.0:
            raise ValueError("min_detection_confidence must be in [0.0, 1.0]")
        self._start(_FaceDetector(model_selection=model_selection, **_base.native_options()),
                    ("detections",))  # fmt: skip

    def process(self, image: np.ndarray):
        """Processes an RGB image: SolutionOutputs with "detections" (None: no face)."""
        return super().process(input_data={"image": image})

    def _outputs(self, result) -> tuple:
        detections = [_messages.detection(d.score, d.box, d.keypoints) for d in result.detections]
        return (detections or None,)
