"""MediaPipe Pose (mp.solutions.pose) on engine.vision.Pose.

- input: RGB uint8 images (H, W, 3): a video's frames in order (smoothed, stamped 33333 us
  apart as MediaPipe's Python API does), or stills with static_image_mode=True
- output: SolutionOutputs(pose_landmarks, pose_world_landmarks, segmentation_mask): a
  NormalizedLandmarkList (33: x, y, z and visibility; presence unset, as 0.10.14 leaves
  it), a LandmarkList (metres, origin between the hips; the same visibility), and with
  enable_segmentation the mask (H, W) float32, read-only; all None when no pose
- options: MediaPipe's (model_complexity 0, 1, 2: the lite, full and heavy models);
  engine options: engine_options()
- usage:
    with mp.solutions.pose.Pose(enable_segmentation=True) as pose:
        res = pose.process(rgb)
        elbow = res.pose_landmarks.landmark[mp.solutions.pose.PoseLandmark.LEFT_ELBOW]
"""

from __future__ import annotations

import numpy as np

from engine.vision import Pose as _Pose
from engine.vision.connections import POSE_CONNECTIONS, PoseLandmark
from engine.vision.mediapipe import solution_base as _base
from engine.vision.mediapipe.solution_base import SolutionBase

__all__ = ["POSE_CONNECTIONS", "Pose", "PoseLandmark", "SolutionBase"]


class Pose(SolutionBase):
    """MediaPipe Pose: an RGB image -> the pose landmarks of the most prominent person."""

    def __init__(self, static_image_mode=False, model_complexity=1, smooth_landmarks=True,
                 enable_segmentation=False, smooth_segmentation=True,
                 min_detection_confidence=0.5, min_tracking_confidence=0.5):  # fmt: skip
        """As MediaPipe's: static_image_mode, model_complexity, smooth_landmarks,
        enable_segmentation, smooth_segmentation and the two confidences."""
        self._start(_Pose(static_image_mode=static_image_mode, model_complexity=model_complexity,
                          smooth_landmarks=smooth_landmarks,
                          enable_segmentation=enable_segmentation,
                          smooth_segmentation=smooth_segmentation,
                          min_detection_confidence=min_detection_confidence,
                          min_tracking_confidence=min_tracking_confidence,
                          **_base.native_options()),
                    ("pose_landmarks", "pose_world_landmarks", "segmentation_mask"))  # fmt: skip

    def process(self, image: np.ndarray):
        """Processes an RGB image: SolutionOutputs with "pose_landmarks",
        "pose_world_landmarks" and "segmentation_mask"."""
        return super().process(input_data={"image": image})

    def _outputs(self, result) -> tuple:
        return _base.pose_outputs(result)
