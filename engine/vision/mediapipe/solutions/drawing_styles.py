"""MediaPipe solution drawing styles (mp.solutions.drawing_styles): engine.vision.drawing's
get_default_* styles, which are MediaPipe's (pixel-equal drawings:
tests/vision/mediapipe/test_drawing.py)."""

from engine.vision.connections import HandLandmark, PoseLandmark
from engine.vision.drawing import (
    DrawingSpec,
    get_default_face_mesh_contours_style,
    get_default_face_mesh_iris_connections_style,
    get_default_face_mesh_tesselation_style,
    get_default_hand_connections_style,
    get_default_hand_landmarks_style,
    get_default_pose_landmarks_style,
)

__all__ = [
    "DrawingSpec",
    "HandLandmark",
    "PoseLandmark",
    "get_default_face_mesh_contours_style",
    "get_default_face_mesh_iris_connections_style",
    "get_default_face_mesh_tesselation_style",
    "get_default_hand_connections_style",
    "get_default_hand_landmarks_style",
    "get_default_pose_landmarks_style",
]
