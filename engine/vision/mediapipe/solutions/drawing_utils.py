"""MediaPipe solution drawing utils (mp.solutions.drawing_utils), over engine.vision.drawing.

- input: MediaPipe's messages (a NormalizedLandmarkList, a Detection: the drop-in's, the
  real mediapipe's or anything with the same fields and HasField) and a BGR image
- output: the image drawn in place, pixel for pixel as MediaPipe's drawing_utils draws it
  (tests/vision/mediapipe/test_drawing.py checks against MediaPipe's own drawings)
- semantics: each function checks what MediaPipe's checks, in its order, then reads the
  message into arrays (x, y, z; visibility and presence NaN where unset) and draws with
  engine.vision.drawing, the one implementation (draw_axis is that module's own);
  plot_landmarks needs matplotlib, imported when called
- usage:
    mp_drawing.draw_landmarks(image, hand_landmarks, mp_hands.HAND_CONNECTIONS,
                              mp_drawing_styles.get_default_hand_landmarks_style(),
                              mp_drawing_styles.get_default_hand_connections_style())
"""

from __future__ import annotations

import math

import numpy as np

from engine.vision import drawing as _drawing
from engine.vision.drawing import (
    BLACK_COLOR,
    BLUE_COLOR,
    GREEN_COLOR,
    RED_COLOR,
    WHITE_COLOR,
    DrawingSpec,
    draw_axis,
)
from engine.vision.mediapipe.messages import LocationData as _LocationData

__all__ = [
    "BLACK_COLOR",
    "BLUE_COLOR",
    "GREEN_COLOR",
    "RED_COLOR",
    "WHITE_COLOR",
    "DrawingSpec",
    "draw_axis",
    "draw_detection",
    "draw_landmarks",
    "plot_landmarks",
]

_BGR_CHANNELS = 3
# MediaPipe's default arguments: one instance each, shared by every call, as MediaPipe's
_KEYPOINT_SPEC = DrawingSpec(color=RED_COLOR)
_BOX_SPEC = DrawingSpec()
_LANDMARK_SPEC = DrawingSpec(color=RED_COLOR)
_CONNECTION_SPEC = DrawingSpec()
_PLOT_LANDMARK_SPEC = DrawingSpec(color=RED_COLOR, thickness=5)
_PLOT_CONNECTION_SPEC = DrawingSpec(color=BLACK_COLOR, thickness=5)


def _arrays(landmark_list):
    """(points (N, 3), visibility (N,) or None, presence (N,) or None) of a landmark list;
    NaN where a landmark leaves the field unset (never hidden, as HasField is False)."""
    points, visibility, presence = [], [], []
    for lm in landmark_list.landmark:
        points.append((lm.x, lm.y, lm.z))
        visibility.append(lm.visibility if lm.HasField("visibility") else math.nan)
        presence.append(lm.presence if lm.HasField("presence") else math.nan)
    points = np.array(points, np.float64).reshape(-1, 3)

    def column(values):
        return None if all(math.isnan(v) for v in values) else np.array(values, np.float64)

    return points, column(visibility), column(presence)


def draw_detection(image: np.ndarray, detection,
                   keypoint_drawing_spec: DrawingSpec = _KEYPOINT_SPEC,
                   bbox_drawing_spec: DrawingSpec = _BOX_SPEC):  # fmt: skip
    """Draws the detection bounding box and keypoints on the image.

    Raises:
      ValueError: the image is not three channel BGR, or the location data is not relative.
    """
    if not detection.location_data:
        return
    if image.shape[2] != _BGR_CHANNELS:
        raise ValueError("Input image must contain three channel bgr data.")
    location = detection.location_data
    if location.format != _LocationData.RELATIVE_BOUNDING_BOX:
        raise ValueError("LocationData must be relative for this drawing funtion to work.")
    keypoints = [(k.x, k.y) for k in location.relative_keypoints]
    box = None
    if location.HasField("relative_bounding_box"):
        b = location.relative_bounding_box
        box = (b.xmin, b.ymin, b.xmin + b.width, b.ymin + b.height)  # doubles, as MediaPipe
    _drawing.draw_detection(image, keypoints, box, keypoint_drawing_spec, bbox_drawing_spec)


def draw_landmarks(image: np.ndarray, landmark_list, connections=None,
                   landmark_drawing_spec=_LANDMARK_SPEC,
                   connection_drawing_spec=_CONNECTION_SPEC,
                   is_drawing_landmarks: bool = True):  # fmt: skip
    """Draws the landmarks and the connections on the image.

    Args:
      image: A three channel BGR image represented as numpy ndarray.
      landmark_list: A normalized landmark list proto message to be annotated on the image.
      connections: A list of landmark index tuples that specifies how landmarks to be
        connected in the drawing.
      landmark_drawing_spec: A DrawingSpec, or a mapping from landmark index to DrawingSpec;
        None: no landmarks are drawn.
      connection_drawing_spec: A DrawingSpec, or a mapping from connection to DrawingSpec;
        None: no connections are drawn.
      is_drawing_landmarks: Whether to draw landmarks (False: only the connections).

    Raises:
      ValueError: the image is not three channel BGR, or a connection names no landmark.
    """
    if not landmark_list:
        return
    if image.shape[2] != _BGR_CHANNELS:
        raise ValueError("Input image must contain three channel bgr data.")
    points, visibility, presence = _arrays(landmark_list)
    _drawing.draw_landmarks(image, points, connections, landmark_drawing_spec,
                            connection_drawing_spec, visibility=visibility, presence=presence,
                            draw_points=is_drawing_landmarks)  # fmt: skip


def plot_landmarks(landmark_list, connections=None,
                   landmark_drawing_spec: DrawingSpec = _PLOT_LANDMARK_SPEC,
                   connection_drawing_spec: DrawingSpec = _PLOT_CONNECTION_SPEC,
                   elevation: int = 10, azimuth: int = 10):  # fmt: skip
    """Plot the landmarks and the connections in matplotlib 3d (needs matplotlib).

    Raises:
      ValueError: a connection names no landmark.
      ImportError: matplotlib is not installed.
    """
    if not landmark_list:
        return
    points, visibility, presence = _arrays(landmark_list)
    _drawing.plot_landmarks(points, connections, landmark_drawing_spec, connection_drawing_spec,
                            elevation, azimuth, visibility=visibility,
                            presence=presence)  # fmt: skip
