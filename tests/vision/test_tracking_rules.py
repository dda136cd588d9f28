"""The CPU-side tracking rules (no GPU): rect association, RoiTracking's checks, the filters.

Their end-to-end oracle is MediaPipe's own output (tests/vision/test_fidelity_people.py);
these cases pin the rules' edges, worked out by hand from the C++ they transcribe."""

from __future__ import annotations

import math

import numpy as np
import pytest

from engine.vision.roi import Rect
from engine.vision.smoothing import LowPassFilter, OneEuroFilter, smooth_mask
from engine.vision.tracking import (
    HAND_TRACKING,
    associate_rects,
    keep_tracking,
    rect_iou,
)

SIZE = (640, 480)


def _rect(x, y, w=0.2, h=0.2, r=0.0):
    return Rect(x, y, w, h, r)


def test_rect_iou_by_hand():
    a, b = _rect(0.5, 0.5), _rect(0.6, 0.5)  # half overlapping in x
    assert rect_iou(a, b) == pytest.approx(0.1 * 0.2 / (2 * 0.04 - 0.1 * 0.2))
    assert rect_iou(a, _rect(0.9, 0.9)) == 0.0
    assert rect_iou(a, _rect(0.5, 0.5, r=1.0)) == pytest.approx(1.0)  # rotation ignored


def test_association_keeps_later_streams_and_later_rects():
    detected = [_rect(0.3, 0.3), _rect(0.32, 0.3), _rect(0.8, 0.8)]  # the first two overlap
    tracked = [_rect(0.81, 0.8)]  # overlaps the third detection
    kept = associate_rects(detected, tracked)
    assert [(s, r.x_center) for s, r in kept] == [(0, 0.32), (1, 0.81)]


def test_association_threshold_is_strict():
    a = _rect(0.5, 0.5)
    shift = 0.2 / 3  # IoU exactly 0.5 for 0.2-wide squares shifted by a third of a side
    b = _rect(0.5 + shift, 0.5)
    assert rect_iou(a, b) == pytest.approx(0.5)
    assert len(associate_rects([a], [b], min_similarity=rect_iou(a, b))) == 2
    assert len(associate_rects([a], [b], min_similarity=rect_iou(a, b) - 1e-9)) == 1


def test_keep_tracking_rect_and_landmark_requirements():
    recrop = _rect(0.5, 0.5, 0.25, 0.25 * 640 / 480)  # square in pixels
    inside = np.array([[0.5, 0.5], [0.45, 0.55]])
    assert keep_tracking(recrop, recrop, inside, SIZE, HAND_TRACKING)
    rotated = Rect(0.5, 0.5, recrop.width, recrop.height, math.radians(41))
    assert not keep_tracking(rotated, recrop, inside, SIZE, HAND_TRACKING)  # > 40 degrees
    moved = _rect(0.5 + 0.25 * 0.21, 0.5, recrop.width, recrop.height)
    assert not keep_tracking(moved, recrop, inside, SIZE, HAND_TRACKING)  # > 0.2 of the side
    # margin -0.1: the re-crop shrunk to 90 %: a landmark at 46 % of the side from the centre
    outside = np.array([[0.5 + 0.25 * 0.46, 0.5]])
    assert not keep_tracking(recrop, recrop, outside, SIZE, HAND_TRACKING)
    assert keep_tracking(recrop, recrop, np.array([[0.5 + 0.25 * 0.44, 0.5]]), SIZE,
                         HAND_TRACKING)  # fmt: skip


def test_low_pass_filter_first_value_passes_then_mixes():
    f = LowPassFilter(0.1)
    assert f.apply(10.0) == 10.0
    assert f.apply(0.0) == pytest.approx(9.0)
    assert f.apply(0.0, alpha=1.5) == pytest.approx(8.1)  # an alpha outside [0, 1] is ignored


def test_one_euro_filter_by_hand():
    """Two samples 1/30 s apart, worked out from one_euro_filter.cc's formulas."""
    f = OneEuroFilter(30.0, min_cutoff=1.0, beta=0.0, derivate_cutoff=1.0)
    t = 33_333_000
    assert f.apply(t, 1.0, 5.0) == 5.0  # the first value passes
    te = 0.033333
    alpha = 1.0 / (1.0 + (1.0 / (2 * math.pi * 1.0)) / te)
    assert f.apply(2 * t, 1.0, 6.0) == pytest.approx(5.0 + alpha * 1.0, rel=1e-5)
    assert f.apply(2 * t, 1.0, 100.0) == 100.0  # a repeated timestamp passes the value


def test_smooth_mask_keeps_certain_pixels_and_mixes_uncertain_ones():
    new = np.array([[0.0, 1.0, 0.5]], np.float32)
    previous = np.array([[1.0, 0.0, 1.0]], np.float32)
    out = smooth_mask(new, previous, 0.7)
    # p = 0 or 1: the polynomial leaves 4.3e-5 of uncertainty, so 3e-5 of the previous value
    assert out[0, 0] == pytest.approx(3.0e-5, abs=1e-6) and out[0, 1] == pytest.approx(
        1 - 3.0e-5, abs=1e-6
    )
    assert out[0, 2] == pytest.approx(0.5 + 0.5 * 0.7)  # p = 0.5: fully uncertain
    assert smooth_mask(new, None, 0.7) is new
