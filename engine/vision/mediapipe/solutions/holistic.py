"""MediaPipe Holistic (mp.solutions.holistic) on engine.vision.Holistic.

- input: RGB uint8 images (H, W, 3): a video's frames in order, or stills with
  static_image_mode=True
- output: SolutionOutputs(pose_landmarks, pose_world_landmarks, left_hand_landmarks,
  right_hand_landmarks, face_landmarks, segmentation_mask): the pose as mp.solutions.pose
  gives it (with visibility), the subject's left and right hand (21, x y z) and the face
  (468, or 478 with refine_face_landmarks) as NormalizedLandmarkLists, the mask with
  enable_segmentation; each None when absent
- options: MediaPipe's; refine_face_landmarks as FaceMesh's refine_landmarks;
  model_complexity 0 and 2 as Pose; engine options: engine_options()
- usage:
    with mp.solutions.holistic.Holistic() as holistic:
        res = holistic.process(rgb)
        if res.right_hand_landmarks: print(res.right_hand_landmarks.landmark[8].x)
"""

from __future__ import annotations

import numpy as np

from engine.vision import Holistic as _Holistic
from engine.vision.connections import (
    FACEMESH_CONTOURS,
    FACEMESH_TESSELATION,
    HAND_CONNECTIONS,
    POSE_CONNECTIONS,
    HandLandmark,
    PoseLandmark,
)
from engine.vision.mediapipe import messages as _messages
from engine.vision.mediapipe import solution_base as _base
from engine.vision.mediapipe.solution_base import SolutionBase

__all__ = [
    "FACEMESH_CONTOURS",
    "FACEMESH_TESSELATION",
    "HAND_CONNECTIONS",
    "POSE_CONNECTIONS",
    "HandLandmark",
    "Holistic",
    "PoseLandmark",
    "SolutionBase",
]


class Holistic(SolutionBase):
    """MediaPipe Holistic: an RGB image -> pose, face and hand landmarks."""

    def __init__(self, static_image_mode=False, model_complexity=1, smooth_landmarks=True,
                 enable_segmentation=False, smooth_segmentation=True,
                 refine_face_landmarks=False, min_detection_confidence=0.5,
                 min_tracking_confidence=0.5):  # fmt: skip
        """As MediaPipe's: Pose's options, and refine_face_landmarks (the irises)."""
        self._start(_Holistic(static_image_mode=static_image_mode,
                              model_complexity=model_complexity,
                              smooth_landmarks=smooth_landmarks,
                              enable_segmentation=enable_segmentation,
                              smooth_segmentation=smooth_segmentation,
                              refine_face_landmarks=refine_face_landmarks,
                              min_detection_confidence=min_detection_confidence,
                              min_tracking_confidence=min_tracking_confidence,
                              **_base.native_options()),
                    ("pose_landmarks", "pose_world_landmarks", "left_hand_landmarks",
                     "right_hand_landmarks", "face_landmarks", "segmentation_mask"))  # fmt: skip

    def process(self, image: np.ndarray):
        """Processes an RGB image: SolutionOutputs with "pose_landmarks",
        "pose_world_landmarks", "left_hand_landmarks", "right_hand_landmarks",
        "face_landmarks" and "segmentation_mask"."""
        return super().process(input_data={"image": image})

    def _outputs(self, result) -> tuple:
        pose, world, mask = _base.pose_outputs(result.pose)
        left, right, face = (None if a is None else _messages.normalized_landmark_list(a)
                             for a in (result.left_hand_landmarks, result.right_hand_landmarks,
                                       result.face_landmarks))  # fmt: skip
        return pose, world, left, right, face, mask
