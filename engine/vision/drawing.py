"""Drawing results on numpy images, as MediaPipe's drawing_utils.draw_landmarks does.

- input: a BGR uint8 image (H, W, 3), drawn in place; landmarks as an (N, >= 2) array of
  normalised x, y (a solution's `.landmarks`), with optional per-landmark visibility and
  presence (pose); a connection set from engine.vision.connections
- semantics: MediaPipe 0.10.14's drawing_utils.draw_landmarks: a landmark whose visibility
  or presence is below 0.5, or which lies outside [0, 1], is not drawn; pixel =
  min(floor(x * W), W - 1); connections as cv2.line, then each landmark as a white ring
  (radius max(r + 1, int(r * 1.2))) under a filled-colour circle
- usage:
    from engine.vision.connections import HAND_CONNECTIONS
    for hand in res.hands: draw_landmarks(bgr, hand.landmarks, HAND_CONNECTIONS)
The app draws on the GPU (app/effects); this is for scripts, notebooks and tests.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import cv2
import numpy as np

WHITE_COLOR = (224, 224, 224)  # BGR, drawing_utils' colours
RED_COLOR = (0, 0, 255)
GREEN_COLOR = (0, 128, 0)
VISIBILITY_THRESHOLD = 0.5
PRESENCE_THRESHOLD = 0.5


@dataclass(frozen=True)
class DrawingSpec:
    """Colour (BGR), line thickness and circle radius in pixels (drawing_utils' defaults)."""

    color: tuple[int, int, int] = WHITE_COLOR
    thickness: int = 2
    circle_radius: int = 2


def to_pixel(x: float, y: float, width: int, height: int) -> tuple[int, int] | None:
    """A normalised point's pixel, None outside [0, 1] (isclose to the ends counts in)."""

    def valid(v: float) -> bool:
        return (v > 0 or math.isclose(0, v)) and (v < 1 or math.isclose(1, v))

    if not (valid(x) and valid(y)):
        return None
    return min(math.floor(x * width), width - 1), min(math.floor(y * height), height - 1)


def draw_landmarks(image: np.ndarray, landmarks, connections: Iterable | None = None,
                   landmark_spec: DrawingSpec | Mapping | None = DrawingSpec(color=RED_COLOR),
                   connection_spec: DrawingSpec | Mapping | None = DrawingSpec(), *,
                   visibility=None, presence=None, draw_points: bool = True) -> None:  # fmt: skip
    """Draw `landmarks` [N, >= 2] and their `connections` on `image` (see the module doc)."""
    if landmarks is None or len(landmarks) == 0:
        return
    if image.ndim != 3 or image.shape[2] != 3:
        raise ValueError(f"image must be a 3-channel BGR array, not {image.shape}")
    rows, cols = image.shape[:2]
    points = np.asarray(landmarks, np.float64)
    pixels = {}
    for i, (x, y) in enumerate(points[:, :2]):
        if visibility is not None and visibility[i] < VISIBILITY_THRESHOLD:
            continue
        if presence is not None and presence[i] < PRESENCE_THRESHOLD:
            continue
        px = to_pixel(float(x), float(y), cols, rows)
        if px:
            pixels[i] = px
    for a, b in connections or ():
        if not (0 <= a < len(points) and 0 <= b < len(points)):
            raise ValueError(f"connection {a} -> {b}: no such landmark (of {len(points)})")
        if connection_spec and a in pixels and b in pixels:
            spec = connection_spec[(a, b)] if isinstance(connection_spec, Mapping) else \
                connection_spec  # fmt: skip
            cv2.line(image, pixels[a], pixels[b], spec.color, spec.thickness)
    if draw_points and landmark_spec:
        for i, px in pixels.items():
            spec = landmark_spec[i] if isinstance(landmark_spec, Mapping) else landmark_spec
            ring = max(spec.circle_radius + 1, int(spec.circle_radius * 1.2))
            cv2.circle(image, px, ring, WHITE_COLOR, spec.thickness)
            cv2.circle(image, px, spec.circle_radius, spec.color, spec.thickness)
