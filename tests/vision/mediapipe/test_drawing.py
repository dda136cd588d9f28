"""Drawing: the drop-in's drawing_utils and drawing_styles (engine.vision.drawing underneath)
against MediaPipe 0.10.14's own drawings, pixel for pixel (tests/data/mediapipe/
dropin_drawing.npz: make_dropin.py's `drawing_cases` run on MediaPipe's modules, from
MediaPipe's own result messages and synthetic ones; here the same calls on the drop-in's,
from the same bytes). No model, no adapter."""

from __future__ import annotations

import numpy as np
import pytest

from engine.vision import drawing
from engine.vision import mediapipe as mp
from engine.vision.connections import HAND_CONNECTIONS, POSE_CONNECTIONS
from engine.vision.mediapipe import messages
from tests.data.mediapipe.make_dropin import CANVAS, drawing_cases, load_drawings

IMAGES, STORED = load_drawings()
INPUTS = {name: [messages.message_class(full).FromString(data) for full, data in items]
          for name, items in STORED.items()}  # fmt: skip
OURS = drawing_cases(mp.solutions, INPUTS)


def test_every_drawing_is_made():
    assert sorted(OURS) == sorted(IMAGES) and len(IMAGES) == 17
    assert len(INPUTS["hands"]) == 2 and len(INPUTS["face"][0].landmark) == 478


@pytest.mark.parametrize("name", sorted(IMAGES))
def test_drawing_is_mediapipes_pixel_for_pixel(name):
    ours, theirs = OURS[name], IMAGES[name]
    assert ours.shape == theirs.shape == (*CANVAS, 3) and ours.dtype == np.uint8
    assert (theirs != 48).any(), "MediaPipe drew nothing: the case tests nothing"
    differ = np.argwhere((ours != theirs).any(axis=2))
    assert len(differ) == 0, f"{len(differ)} pixels differ, first at {differ[:5].tolist()}"


def _arrays(landmark_list):
    points = np.array([(lm.x, lm.y, lm.z) for lm in landmark_list.landmark], np.float32)
    vis = np.array([lm.visibility if lm.HasField("visibility") else np.nan
                    for lm in landmark_list.landmark], np.float32)  # fmt: skip
    return points, vis


def test_the_native_arrays_draw_the_same_pixels():
    """engine.vision.drawing on a solution's arrays (float32, NaN: unset) is the one
    implementation the drop-in wraps: the same pixels as MediaPipe's from the messages."""
    image = np.full((*CANVAS, 3), 48, np.uint8)
    for hand in INPUTS["hands"]:
        drawing.draw_landmarks(image, _arrays(hand)[0], HAND_CONNECTIONS,
                               drawing.get_default_hand_landmarks_style(),
                               drawing.get_default_hand_connections_style())  # fmt: skip
    assert np.array_equal(image, IMAGES["hands_styled"])
    image = np.full((*CANVAS, 3), 48, np.uint8)
    points, vis = _arrays(INPUTS["pose"][0])
    drawing.draw_landmarks(image, points, POSE_CONNECTIONS,
                           drawing.get_default_pose_landmarks_style(), visibility=vis)  # fmt: skip
    assert np.array_equal(image, IMAGES["pose_styled"])
    image = np.full((*CANVAS, 3), 48, np.uint8)
    for d in INPUTS["detections"]:
        box = d.location_data.relative_bounding_box
        keypoints = [(k.x, k.y) for k in d.location_data.relative_keypoints]
        drawing.draw_detection(image, keypoints, (box.xmin, box.ymin, box.xmin + box.width,
                                                  box.ymin + box.height))  # fmt: skip
    assert np.array_equal(image, IMAGES["detections"])


def test_connection_spec_none_draws_the_landmarks_only():
    """MediaPipe's docstring promises it; its code raises AttributeError once a connection
    is drawn. The drop-in keeps the promise (a script that ran on MediaPipe is unaffected)."""
    image = np.full((*CANVAS, 3), 48, np.uint8)
    points_only = image.copy()
    hand = INPUTS["hands"][0]
    mp.solutions.drawing_utils.draw_landmarks(image, hand, HAND_CONNECTIONS,
                                              connection_drawing_spec=None)  # fmt: skip
    mp.solutions.drawing_utils.draw_landmarks(points_only, hand)
    assert np.array_equal(image, points_only)
