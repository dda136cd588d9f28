"""MediaPipe Hands (mp.solutions.hands) on engine.vision.Hands.

- input: RGB uint8 images (H, W, 3): a video's frames in order, or stills with
  static_image_mode=True; handedness assumes a mirrored (selfie) image, as MediaPipe's
- output: SolutionOutputs(multi_hand_landmarks, multi_hand_world_landmarks,
  multi_handedness): per hand, in MediaPipe's order, a NormalizedLandmarkList (21, x y z),
  a LandmarkList (metres, origin near the hand's centre) and a ClassificationList (index
  0 "Left" / 1 "Right", score); all three None when no hand
- options: MediaPipe's (model_complexity 0: the lite models); engine options:
  engine_options()
- usage:
    with mp.solutions.hands.Hands(max_num_hands=2) as hands:
        res = hands.process(rgb)
        for lms, handed in zip(res.multi_hand_landmarks or [], res.multi_handedness or []):
            tip = lms.landmark[mp.solutions.hands.HandLandmark.INDEX_FINGER_TIP]
"""

from __future__ import annotations

import numpy as np

from engine.vision import Hands as _Hands
from engine.vision.connections import HAND_CONNECTIONS, HandLandmark
from engine.vision.mediapipe import messages as _messages
from engine.vision.mediapipe import solution_base as _base
from engine.vision.mediapipe.solution_base import SolutionBase

__all__ = ["HAND_CONNECTIONS", "HandLandmark", "Hands", "SolutionBase"]


class Hands(SolutionBase):
    """MediaPipe Hands: an RGB image -> the landmarks and handedness of each hand."""

    def __init__(self, static_image_mode=False, max_num_hands=2, model_complexity=1,
                 min_detection_confidence=0.5, min_tracking_confidence=0.5):  # fmt: skip
        """As MediaPipe's: static_image_mode, max_num_hands, model_complexity (0 or 1), and
        the two confidences ([0.0, 1.0])."""
        self._start(_Hands(static_image_mode=static_image_mode, max_num_hands=max_num_hands,
                           model_complexity=model_complexity,
                           min_detection_confidence=min_detection_confidence,
                           min_tracking_confidence=min_tracking_confidence,
                           **_base.native_options()),
                    ("multi_hand_landmarks", "multi_hand_world_landmarks",
                     "multi_handedness"))  # fmt: skip

    def process(self, image: np.ndarray):
        """Processes an RGB image: SolutionOutputs with "multi_hand_landmarks",
        "multi_hand_world_landmarks" and "multi_handedness" (None: no hand)."""
        return super().process(input_data={"image": image})

    def _outputs(self, result) -> tuple:
        if not result.hands:
            return None, None, None
        landmarks = [_messages.normalized_landmark_list(h.landmarks) for h in result.hands]
        world = [_messages.landmark_list(h.world_landmarks) for h in result.hands]
        classes = [h.handedness for h in result.hands]
        handedness = [_messages.classification_list(c.index, c.score, c.label) for c in classes]
        return landmarks, world, handedness
