"""The candidate set: sizes, caps, limits, order."""

from __future__ import annotations

import pytest

from engine.gpu.workgroups import (
    Candidate,
    DeviceLimits,
    KernelSignature,
    WorkShape,
    candidates,
    within_limits,
)
from engine.gpu.workgroups.candidates import axis_caps, pow2_ceil, pow2_floor, usable_work
from tests.helpers.workgroups import ONE, WIDE, conv


def test_pow2():
    assert [pow2_floor(n) for n in (1, 2, 3, 255, 256)] == [1, 2, 2, 128, 256]
    assert [pow2_ceil(n) for n in (1, 2, 3, 255, 256)] == [1, 2, 4, 256, 256]


def test_one_dimensional_set():
    sig = KernelSignature("k", (1000, 1, 1), work=ONE)
    sizes = [c.workgroup for c in candidates(sig, DeviceLimits())]
    assert sizes == [(8, 1, 1), (16, 1, 1), (32, 1, 1), (64, 1, 1), (128, 1, 1), (256, 1, 1)]


def test_caps_follow_space_and_limits():
    lim = DeviceLimits(max_size=(256, 256, 4))
    assert axis_caps((100, 3, 40), WorkShape(4, 1, 4), lim) == (32, 4, 4)
    for c in candidates(conv((100, 3, 40)), lim):
        assert c.workgroup[1] <= 4 and c.workgroup[2] <= 4 and 8 <= c.size <= 256


def test_tiny_grid_keeps_the_one_group_covering_it():
    sig = KernelSignature("k", (2, 2, 1), work=ONE)
    assert candidates(sig, DeviceLimits()) == [Candidate((2, 2, 1), WorkShape())]


def test_work_shapes_larger_than_space_are_dropped():
    assert usable_work(conv((2, 2, 8))) == (WorkShape(2, 1, 2), WorkShape(1, 1, 1))
    sig = KernelSignature("k", (1, 1, 1), work=(WorkShape(4, 1, 1),))
    assert usable_work(sig) == sig.work  # none fits: keep them all


def test_limits_respected_and_order_deterministic():
    lim = DeviceLimits(max_invocations=100, max_size=(16, 8, 2))
    pool = candidates(conv((300, 200, 32)), lim)
    assert pool == candidates(conv((300, 200, 32)), lim)
    assert all(within_limits(c, conv((300, 200, 32)), lim) for c in pool)
    assert max(c.size for c in pool) == 64
    assert 256 in {c.size for c in candidates(conv((300, 200, 32)), WIDE)}  # capped at 256


def test_grid_limit_and_no_candidate():
    sig = KernelSignature("k", (5000, 1, 1), work=ONE)
    lim = DeviceLimits(max_groups=100, max_size=(32, 1, 1))
    with pytest.raises(ValueError, match="no work group"):
        candidates(sig, lim)
