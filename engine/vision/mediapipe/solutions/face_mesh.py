"""MediaPipe Face Mesh (mp.solutions.face_mesh) on engine.vision.FaceMesh.

- input: RGB uint8 images (H, W, 3): a video's frames in order, or stills with
  static_image_mode=True
- output: SolutionOutputs(multi_face_landmarks): a NormalizedLandmarkList per face (468
  landmarks; 478 with refine_landmarks: the irises last), x, y, z only, as MediaPipe's;
  None when no face
- options: MediaPipe's; refine_landmarks runs face_landmark_with_attention (on xnnpack
  as LiteRT segments around its custom ops); engine options: engine_options()
- usage:
    with mp.solutions.face_mesh.FaceMesh(max_num_faces=2) as fm:
        for face in fm.process(rgb).multi_face_landmarks or []:
            nose = face.landmark[1]
"""

from __future__ import annotations

import numpy as np

from engine.vision import FaceMesh as _FaceMesh
from engine.vision.connections import (
    FACEMESH_CONTOURS,
    FACEMESH_FACE_OVAL,
    FACEMESH_IRISES,
    FACEMESH_LEFT_EYE,
    FACEMESH_LEFT_EYEBROW,
    FACEMESH_LEFT_IRIS,
    FACEMESH_LIPS,
    FACEMESH_NOSE,
    FACEMESH_RIGHT_EYE,
    FACEMESH_RIGHT_EYEBROW,
    FACEMESH_RIGHT_IRIS,
    FACEMESH_TESSELATION,
)
from engine.vision.mediapipe import messages as _messages
from engine.vision.mediapipe import solution_base as _base
from engine.vision.mediapipe.solution_base import SolutionBase

__all__ = [
    "FACEMESH_CONTOURS",
    "FACEMESH_FACE_OVAL",
    "FACEMESH_IRISES",
    "FACEMESH_LEFT_EYE",
    "FACEMESH_LEFT_EYEBROW",
    "FACEMESH_LEFT_IRIS",
    "FACEMESH_LIPS",
    "FACEMESH_NOSE",
    "FACEMESH_NUM_LANDMARKS",
    "FACEMESH_NUM_LANDMARKS_WITH_IRISES",
    "FACEMESH_RIGHT_EYE",
    "FACEMESH_RIGHT_EYEBROW",
    "FACEMESH_RIGHT_IRIS",
    "FACEMESH_TESSELATION",
    "FaceMesh",
    "SolutionBase",
]

FACEMESH_NUM_LANDMARKS = 468
FACEMESH_NUM_LANDMARKS_WITH_IRISES = 478


class FaceMesh(SolutionBase):
    """MediaPipe Face Mesh: an RGB image -> the face landmarks of each detected face."""

    def __init__(self, static_image_mode=False, max_num_faces=1, refine_landmarks=False,
                 min_detection_confidence=0.5, min_tracking_confidence=0.5):  # fmt: skip
        """As MediaPipe's: static_image_mode (stills, no tracking), max_num_faces,
        refine_landmarks (the irises: 478 landmarks), and the two confidences."""
        self._start(_FaceMesh(static_image_mode=static_image_mode, max_num_faces=max_num_faces,
                              refine_landmarks=refine_landmarks,
                              min_detection_confidence=min_detection_confidence,
                              min_tracking_confidence=min_tracking_confidence,
                              **_base.native_options()),
                    ("multi_face_landmarks",))  # fmt: skip

    def process(self, image: np.ndarray):
        """Processes an RGB image: SolutionOutputs with "multi_face_landmarks"."""
        return super().process(input_data={"image": image})

    def _outputs(self, result) -> tuple:
        faces = [_messages.normalized_landmark_list(f.landmarks) for f in result.faces or ()]
        return (faces or None,)
