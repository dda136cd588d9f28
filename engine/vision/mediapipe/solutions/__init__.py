"""MediaPipe 0.10.14's `mediapipe.python.solutions` (`mp.solutions`), on engine.vision.

One module per MediaPipe module, each with MediaPipe's public names: face_detection,
face_mesh (and face_mesh_connections), hands (hands_connections), pose (pose_connections),
holistic, selfie_segmentation, drawing_utils, drawing_styles, objectron (its models are not
available: constructing Objectron is a ModelError). docs/mediapipe.md lists every name.
"""

from engine.vision.mediapipe.solutions import (
    drawing_styles,
    drawing_utils,
    face_detection,
    face_mesh,
    face_mesh_connections,
    hands,
    hands_connections,
    holistic,
    objectron,
    pose,
    pose_connections,
    selfie_segmentation,
)

__all__ = [
    "drawing_styles",
    "drawing_utils",
    "face_detection",
    "face_mesh",
    "face_mesh_connections",
    "hands",
    "hands_connections",
    "holistic",
    "objectron",
    "pose",
    "pose_connections",
    "selfie_segmentation",
]
