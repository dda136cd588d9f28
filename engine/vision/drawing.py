"""Drawing results on numpy images, as MediaPipe 0.10.14's drawing_utils and drawing_styles.

- input: a BGR uint8 image (H, W, 3), drawn in place; landmarks as an (N, >= 2) array of
  normalised x, y (a solution's `.landmarks`; z too for plot_landmarks), with optional
  per-landmark visibility and presence (pose; NaN: unset, as a message field MediaPipe did
  not set); a connection set from engine.vision.connections; a detection's normalised
  keypoints and box (xmin, ymin, xmax, ymax)
- output: the image, drawn as MediaPipe's functions draw it, pixel for pixel (the same
  OpenCV calls with the same arguments, in the same order: tests/vision/mediapipe/
  test_drawing.py checks against MediaPipe's own drawings)
- semantics (MediaPipe's): a landmark whose visibility or presence is below 0.5, or which
  lies outside [0, 1], is not drawn; pixel = min(floor(x * W), W - 1); connections as
  cv2.line in the set's iteration order, then each landmark as a white ring (radius
  max(r + 1, int(r * 1.2))) under a circle of its colour; a spec may be one DrawingSpec or
  a mapping (landmark index or connection -> DrawingSpec), as the get_default_* styles give
- usage:
    from engine.vision.connections import HAND_CONNECTIONS
    for hand in res.hands:
        draw_landmarks(bgr, hand.landmarks, HAND_CONNECTIONS,
                       get_default_hand_landmarks_style(), get_default_hand_connections_style())
The drop-in's drawing_utils (engine/vision/mediapipe/solutions/drawing_utils.py) reads
MediaPipe's messages into these arrays; the app draws on the GPU (app/effects).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Mapping

import cv2
import numpy as np

from engine.vision import connections as sets
from engine.vision.connections import HandLandmark, PoseLandmark

WHITE_COLOR = (224, 224, 224)  # BGR, drawing_utils' colours
BLACK_COLOR = (0, 0, 0)
RED_COLOR = (0, 0, 255)
GREEN_COLOR = (0, 128, 0)
BLUE_COLOR = (255, 0, 0)
VISIBILITY_THRESHOLD = 0.5
PRESENCE_THRESHOLD = 0.5
BGR_CHANNELS = 3


@dataclasses.dataclass
class DrawingSpec:
    """Colour (BGR), line thickness and circle radius in pixels (drawing_utils' defaults).
    Mutable, as MediaPipe's."""

    color: tuple[int, int, int] = WHITE_COLOR
    thickness: int = 2
    circle_radius: int = 2


# the defaults of MediaPipe's signatures: one instance each, shared by every call, as
# MediaPipe's default arguments are
_RED_SPEC = DrawingSpec(color=RED_COLOR)
_WHITE_SPEC = DrawingSpec()
_PLOT_POINT_SPEC = DrawingSpec(color=RED_COLOR, thickness=5)
_PLOT_LINE_SPEC = DrawingSpec(color=BLACK_COLOR, thickness=5)


def to_pixel(x: float, y: float, width: int, height: int) -> tuple[int, int] | None:
    """A normalised point's pixel, None outside [0, 1] (isclose to the ends counts in)."""

    def valid(v: float) -> bool:
        return (v > 0 or math.isclose(0, v)) and (v < 1 or math.isclose(1, v))

    if not (valid(x) and valid(y)):
        return None
    return min(math.floor(x * width), width - 1), min(math.floor(y * height), height - 1)


def _check_image(image: np.ndarray) -> tuple[int, int]:
    if image.shape[2] != BGR_CHANNELS:  # a 2-D image: IndexError, as MediaPipe's
        raise ValueError("Input image must contain three channel bgr data.")
    return image.shape[0], image.shape[1]


def _visible(visibility, presence) -> list[bool] | None:
    """Per landmark: not hidden by a visibility or presence below its threshold."""
    checks = [(visibility, VISIBILITY_THRESHOLD), (presence, PRESENCE_THRESHOLD)]
    keep = None
    for values, threshold in checks:
        if values is not None:
            hidden = np.asarray(values, np.float64) < threshold  # NaN (unset): shown
            keep = ~hidden if keep is None else keep & ~hidden
    return None if keep is None else keep.tolist()


def _columns(landmarks, n: int) -> list:
    """The first `n` columns of each landmark, as Python floats (float32 values exactly)."""
    array = np.asarray(landmarks, np.float64)
    return array.reshape(len(array), -1)[:, :n].tolist() if array.size else []


def _check_connection(connection, count: int) -> None:
    a, b = connection[0], connection[1]
    if not (0 <= a < count and 0 <= b < count):
        raise ValueError(f"Landmark index is out of range. Invalid connection from landmark "
                         f"#{a} to landmark #{b}.")  # fmt: skip


def draw_landmarks(image: np.ndarray, landmarks, connections: Iterable | None = None,
                   landmark_spec: DrawingSpec | Mapping | None = _RED_SPEC,
                   connection_spec: DrawingSpec | Mapping | None = _WHITE_SPEC, *,
                   visibility=None, presence=None, draw_points: bool = True) -> None:  # fmt: skip
    """Draw `landmarks` [N, >= 2] and their `connections` on `image` (see the module doc);
    None draws nothing; `landmark_spec=None` or `draw_points=False`: the connections only;
    `connection_spec=None`: the landmarks only (as MediaPipe's docstring says; its code
    raises AttributeError there when a connection is drawn)."""
    if landmarks is None:
        return
    rows, cols = _check_image(image)
    points = _columns(landmarks, 2)
    keep = _visible(visibility, presence)
    pixels = {}
    for i, (x, y) in enumerate(points):
        if keep is not None and not keep[i]:
            continue
        px = to_pixel(x, y, cols, rows)
        if px:
            pixels[i] = px
    if connections:
        for connection in connections:
            _check_connection(connection, len(points))
            a, b = connection[0], connection[1]
            if a in pixels and b in pixels and connection_spec is not None:
                spec = connection_spec[connection] if isinstance(connection_spec, Mapping) \
                    else connection_spec  # fmt: skip
                cv2.line(image, pixels[a], pixels[b], spec.color, spec.thickness)
    if draw_points and landmark_spec:
        for i, px in pixels.items():
            spec = landmark_spec[i] if isinstance(landmark_spec, Mapping) else landmark_spec
            ring = max(spec.circle_radius + 1, int(spec.circle_radius * 1.2))
            cv2.circle(image, px, ring, WHITE_COLOR, spec.thickness)
            cv2.circle(image, px, spec.circle_radius, spec.color, spec.thickness)


def draw_detection(image: np.ndarray, keypoints, box=None,
                   keypoint_spec: DrawingSpec = _RED_SPEC,
                   box_spec: DrawingSpec = _WHITE_SPEC) -> None:  # fmt: skip
    """Draw a detection's normalised `keypoints` [K, 2] as circles and its `box` (xmin,
    ymin, xmax, ymax; None: no box) as a rectangle. A point outside [0, 1] goes to OpenCV
    as None, as MediaPipe's does (OpenCV 5 draws it at (0, 0), OpenCV 4 raises)."""
    rows, cols = _check_image(image)
    for x, y in np.asarray(keypoints, np.float64).reshape(-1, 2).tolist():
        px = to_pixel(x, y, cols, rows)
        cv2.circle(image, px, keypoint_spec.circle_radius, keypoint_spec.color,
                   keypoint_spec.thickness)  # fmt: skip
    if box is None:
        return
    xmin, ymin, xmax, ymax = (float(v) for v in box)
    start, end = to_pixel(xmin, ymin, cols, rows), to_pixel(xmax, ymax, cols, rows)
    cv2.rectangle(image, start, end, box_spec.color, box_spec.thickness)


def draw_axis(image: np.ndarray, rotation: np.ndarray, translation: np.ndarray,
              focal_length: tuple[float, float] = (1.0, 1.0),
              principal_point: tuple[float, float] = (0.0, 0.0), axis_length: float = 0.1,
              axis_drawing_spec: DrawingSpec = _WHITE_SPEC) -> None:  # fmt: skip
    """Draw an object's x (red), y (green), z (blue) axes from its `rotation` (3, 3) and
    `translation` (3,) in camera space, projected with `focal_length` and
    `principal_point` in NDC (MediaPipe's convention); `axis_drawing_spec`'s thickness."""
    rows, cols = _check_image(image)
    axis_world = np.float32([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]])
    axis_cam = np.matmul(rotation, axis_length * axis_world.T).T + translation
    x, y, z = axis_cam[..., 0], axis_cam[..., 1], axis_cam[..., 2]
    fx, fy = focal_length
    px, py = principal_point
    x_ndc = np.clip(-fx * x / (z + 1e-5) + px, -1.0, 1.0)
    y_ndc = np.clip(-fy * y / (z + 1e-5) + py, -1.0, 1.0)
    x_im = np.int32((1 + x_ndc) * 0.5 * cols)
    y_im = np.int32((1 - y_ndc) * 0.5 * rows)
    origin = (x_im[0], y_im[0])
    for k, color in ((1, RED_COLOR), (2, GREEN_COLOR), (3, BLUE_COLOR)):
        cv2.arrowedLine(image, origin, (x_im[k], y_im[k]), color, axis_drawing_spec.thickness)


def plot_landmarks(landmarks, connections: Iterable | None = None,
                   landmark_spec: DrawingSpec = _PLOT_POINT_SPEC,
                   connection_spec: DrawingSpec = _PLOT_LINE_SPEC,
                   elevation: int = 10, azimuth: int = 10, *, visibility=None,
                   presence=None) -> None:  # fmt: skip
    """Plot `landmarks` [N, 3] (x, y, z) and their connections in a matplotlib 3-D figure
    and show it, as MediaPipe's plot_landmarks (axes: -z, x, -y). Needs matplotlib."""
    if landmarks is None:
        return
    try:
        import matplotlib.pyplot as plt
    except ImportError as exc:
        raise ImportError("plot_landmarks draws with matplotlib, which is not installed: "
                          "pip install matplotlib") from exc  # fmt: skip
    points = _columns(landmarks, 3)
    keep = _visible(visibility, presence)
    plt.figure(figsize=(10, 10))
    ax = plt.axes(projection="3d")
    ax.view_init(elev=elevation, azim=azimuth)
    plotted = {}
    for i, (x, y, z) in enumerate(points):
        if keep is not None and not keep[i]:
            continue
        ax.scatter3D(xs=[-z], ys=[x], zs=[-y], color=_rgb01(landmark_spec.color),
                     linewidth=landmark_spec.thickness)  # fmt: skip
        plotted[i] = (-z, x, -y)
    if connections:
        for connection in connections:
            _check_connection(connection, len(points))
            a, b = connection[0], connection[1]
            if a in plotted and b in plotted:
                ax.plot3D(xs=[plotted[a][0], plotted[b][0]], ys=[plotted[a][1], plotted[b][1]],
                          zs=[plotted[a][2], plotted[b][2]],
                          color=_rgb01(connection_spec.color),
                          linewidth=connection_spec.thickness)  # fmt: skip
    plt.show()


def _rgb01(bgr) -> tuple[float, ...]:
    return tuple(v / 255.0 for v in bgr[::-1])


# --- drawing_styles: MediaPipe's default styles ------------------------------------------
_RADIUS = 5
_RED = (48, 48, 255)
_GREEN = (48, 255, 48)
_BLUE = (192, 101, 21)
_YELLOW = (0, 204, 255)
_GRAY = (128, 128, 128)
_PURPLE = (128, 64, 128)
_PEACH = (180, 229, 255)
_WHITE = (224, 224, 224)
_CYAN = (192, 255, 48)
_MAGENTA = (192, 48, 255)
_THICKNESS_WRIST_MCP = 3
_THICKNESS_FINGER = 2
_THICKNESS_DOT = -1  # filled
_THICKNESS_TESSELATION = 1
_THICKNESS_CONTOURS = 2
_THICKNESS_POSE_LANDMARKS = 2

# the specs of these tables are shared by every style a get_default_* returns, as
# MediaPipe's are (a spec changed in one style changes it in the next)
_H = HandLandmark
_HAND_LANDMARK_STYLE = {
    (_H.WRIST, _H.THUMB_CMC, _H.INDEX_FINGER_MCP, _H.MIDDLE_FINGER_MCP, _H.RING_FINGER_MCP,
     _H.PINKY_MCP): DrawingSpec(color=_RED, thickness=_THICKNESS_DOT, circle_radius=_RADIUS),
    (_H.THUMB_MCP, _H.THUMB_IP, _H.THUMB_TIP):
        DrawingSpec(color=_PEACH, thickness=_THICKNESS_DOT, circle_radius=_RADIUS),
    (_H.INDEX_FINGER_PIP, _H.INDEX_FINGER_DIP, _H.INDEX_FINGER_TIP):
        DrawingSpec(color=_PURPLE, thickness=_THICKNESS_DOT, circle_radius=_RADIUS),
    (_H.MIDDLE_FINGER_PIP, _H.MIDDLE_FINGER_DIP, _H.MIDDLE_FINGER_TIP):
        DrawingSpec(color=_YELLOW, thickness=_THICKNESS_DOT, circle_radius=_RADIUS),
    (_H.RING_FINGER_PIP, _H.RING_FINGER_DIP, _H.RING_FINGER_TIP):
        DrawingSpec(color=_GREEN, thickness=_THICKNESS_DOT, circle_radius=_RADIUS),
    (_H.PINKY_PIP, _H.PINKY_DIP, _H.PINKY_TIP):
        DrawingSpec(color=_BLUE, thickness=_THICKNESS_DOT, circle_radius=_RADIUS),
}  # fmt: skip
_HAND_CONNECTION_STYLE = {
    sets.HAND_PALM_CONNECTIONS: DrawingSpec(color=_GRAY, thickness=_THICKNESS_WRIST_MCP),
    sets.HAND_THUMB_CONNECTIONS: DrawingSpec(color=_PEACH, thickness=_THICKNESS_FINGER),
    sets.HAND_INDEX_FINGER_CONNECTIONS: DrawingSpec(color=_PURPLE, thickness=_THICKNESS_FINGER),
    sets.HAND_MIDDLE_FINGER_CONNECTIONS: DrawingSpec(color=_YELLOW, thickness=_THICKNESS_FINGER),
    sets.HAND_RING_FINGER_CONNECTIONS: DrawingSpec(color=_GREEN, thickness=_THICKNESS_FINGER),
    sets.HAND_PINKY_FINGER_CONNECTIONS: DrawingSpec(color=_BLUE, thickness=_THICKNESS_FINGER),
}


def _contours(colors: dict) -> dict:
    return {k: DrawingSpec(color=c, thickness=_THICKNESS_CONTOURS) for k, c in colors.items()}


_FACEMESH_CONTOURS_STYLES = (  # get_default_face_mesh_contours_style(i): i = 0, 1
    _contours({
        sets.FACEMESH_LIPS: _WHITE,
        sets.FACEMESH_LEFT_EYE: _GREEN,
        sets.FACEMESH_LEFT_EYEBROW: _GREEN,
        sets.FACEMESH_RIGHT_EYE: _RED,
        sets.FACEMESH_RIGHT_EYEBROW: _RED,
        sets.FACEMESH_FACE_OVAL: _WHITE,
    }),
    _contours({
        sets.FACEMESH_LIPS: _BLUE,
        sets.FACEMESH_LEFT_EYE: _CYAN,
        sets.FACEMESH_LEFT_EYEBROW: _GREEN,
        sets.FACEMESH_RIGHT_EYE: _MAGENTA,
        sets.FACEMESH_RIGHT_EYEBROW: _RED,
        sets.FACEMESH_FACE_OVAL: _WHITE,
        sets.FACEMESH_NOSE: _YELLOW,
    }),
)  # fmt: skip
_P = PoseLandmark
# frozensets built from these lists in this order, as drawing_styles.py builds them
_POSE_LANDMARKS_LEFT = frozenset([
    _P.LEFT_EYE_INNER, _P.LEFT_EYE, _P.LEFT_EYE_OUTER, _P.LEFT_EAR, _P.MOUTH_LEFT,
    _P.LEFT_SHOULDER, _P.LEFT_ELBOW, _P.LEFT_WRIST, _P.LEFT_PINKY, _P.LEFT_INDEX,
    _P.LEFT_THUMB, _P.LEFT_HIP, _P.LEFT_KNEE, _P.LEFT_ANKLE, _P.LEFT_HEEL, _P.LEFT_FOOT_INDEX,
])  # fmt: skip
_POSE_LANDMARKS_RIGHT = frozenset([
    _P.RIGHT_EYE_INNER, _P.RIGHT_EYE, _P.RIGHT_EYE_OUTER, _P.RIGHT_EAR, _P.MOUTH_RIGHT,
    _P.RIGHT_SHOULDER, _P.RIGHT_ELBOW, _P.RIGHT_WRIST, _P.RIGHT_PINKY, _P.RIGHT_INDEX,
    _P.RIGHT_THUMB, _P.RIGHT_HIP, _P.RIGHT_KNEE, _P.RIGHT_ANKLE, _P.RIGHT_HEEL,
    _P.RIGHT_FOOT_INDEX,
])  # fmt: skip


def get_default_hand_landmarks_style() -> Mapping[int, DrawingSpec]:
    """Returns the default hand landmarks drawing style: landmark -> DrawingSpec."""
    return {lm: spec for lms, spec in _HAND_LANDMARK_STYLE.items() for lm in lms}


def get_default_hand_connections_style() -> Mapping[tuple[int, int], DrawingSpec]:
    """Returns the default hand connections drawing style: connection -> DrawingSpec."""
    return {c: spec for cs, spec in _HAND_CONNECTION_STYLE.items() for c in cs}


def get_default_face_mesh_contours_style(i: int = 0) -> Mapping[tuple[int, int], DrawingSpec]:
    """Returns the default face mesh contours drawing style (`i`: 0 or 1, MediaPipe's two;
    any other value gives style 0, as MediaPipe's does)."""
    table = _FACEMESH_CONTOURS_STYLES[1 if i == 1 else 0]
    return {c: spec for cs, spec in table.items() for c in cs}


def get_default_face_mesh_tesselation_style() -> DrawingSpec:
    """Returns the default face mesh tesselation drawing style."""
    return DrawingSpec(color=_GRAY, thickness=_THICKNESS_TESSELATION)


def get_default_face_mesh_iris_connections_style() -> Mapping[tuple[int, int], DrawingSpec]:
    """Returns the default face mesh iris connections drawing style."""
    style = {}
    left = DrawingSpec(color=_GREEN, thickness=_THICKNESS_CONTOURS)
    for connection in sets.FACEMESH_LEFT_IRIS:
        style[connection] = left
    right = DrawingSpec(color=_RED, thickness=_THICKNESS_CONTOURS)
    for connection in sets.FACEMESH_RIGHT_IRIS:
        style[connection] = right
    return style


def get_default_pose_landmarks_style() -> Mapping[int, DrawingSpec]:
    """Returns the default pose landmarks drawing style: landmark -> DrawingSpec."""
    style = {}
    left = DrawingSpec(color=(0, 138, 255), thickness=_THICKNESS_POSE_LANDMARKS)
    right = DrawingSpec(color=(231, 217, 0), thickness=_THICKNESS_POSE_LANDMARKS)
    for landmark in _POSE_LANDMARKS_LEFT:
        style[landmark] = left
    for landmark in _POSE_LANDMARKS_RIGHT:
        style[landmark] = right
    style[PoseLandmark.NOSE] = DrawingSpec(color=_WHITE, thickness=_THICKNESS_POSE_LANDMARKS)
    return style
