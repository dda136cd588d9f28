"""Policies table and heuristic, and choose(): always valid, deterministic."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.gpu.workgroups import (
    Context,
    DeviceLimits,
    KernelSignature,
    WorkShape,
    candidates,
    choose,
    heuristic,
    passed,
    table,
    within_limits,
)
from engine.gpu.workgroups.heuristic import rank
from tests.helpers.workgroups import WIDE, conv, depthwise

SHAPES = [WorkShape(x, y, z) for x in (1, 2, 4, 8) for y in (1, 2, 4) for z in (1, 2, 4)]

signatures = st.builds(
    KernelSignature,
    kernel=st.sampled_from(["conv2d", "conv1x1", "depthwise_tiled", "binary", "mystery"]),
    # x <= max_groups: some candidate always fits
    space=st.tuples(st.integers(1, 65535), st.integers(1, 300), st.integers(1, 64)),
    kind=st.sampled_from(["conv", "depthwise", "elementwise", "other"]),
    bytes_x=st.sampled_from([4, 8, 16, 32]),
    work=st.lists(st.sampled_from(SHAPES), min_size=1, max_size=5, unique=True).map(tuple),
)
limits = st.builds(
    DeviceLimits,
    max_invocations=st.integers(1, 1024),
    max_size=st.tuples(st.integers(1, 1024), st.integers(1, 1024), st.integers(1, 64)),
    subgroup_min=st.just(8),
    subgroup_max=st.sampled_from([8, 16, 32, 64]),
    parallel_units=st.one_of(st.none(), st.integers(1, 64)),
)


@settings(max_examples=150, deadline=None)
@given(signatures, limits)
def test_heuristic_choice_is_valid(sig, lim):
    choice = heuristic(sig, lim)
    pool = candidates(sig, lim)
    assert choice.source == "heuristic" and choice.candidate in pool
    assert within_limits(choice, sig, lim)
    assert all(g & (g - 1) == 0 for g in choice.workgroup)  # powers of two
    for n, g, c in zip(sig.space, choice.groups(sig.space), choice.covered, strict=True):
        assert (g - 1) * c < n <= g * c  # covers the space, no empty group row
    ctx = Context.of(sig, lim, pool)
    best = len(passed(choice.candidate, ctx))
    assert all(len(passed(c, ctx)) <= best for c in pool)  # passes the most rules
    assert heuristic(sig, lim) == choice  # deterministic


@settings(max_examples=100, deadline=None)
@given(signatures, limits)
def test_table_choice_within_device_limits(sig, lim):
    choice = table(sig, lim)
    assert choice.source == "table" and choice.work in sig.work
    assert choice.size <= lim.max_invocations
    assert all(g <= m for g, m in zip(choice.workgroup, lim.max_size, strict=True))


def test_table_reproduces_the_kernels_defaults():
    sig = conv((64, 64, 8))
    assert table(sig, DeviceLimits()).workgroup == (8, 8, 1)
    assert table(sig, DeviceLimits()).work == WorkShape(4, 1, 4)
    dw = table(depthwise(), DeviceLimits())
    assert (dw.workgroup, dw.work) == ((8, 8, 1), WorkShape(2, 4, 1))  # BY 4 x BX 2
    c1 = KernelSignature("conv1x1", (4096, 1, 8), "conv", work=(WorkShape(8, 1, 4),))
    assert table(c1, DeviceLimits()).workgroup == (64, 1, 1)
    ew = table(KernelSignature("binary", (4096, 4, 1), "elementwise"), DeviceLimits())
    assert ew.workgroup == (64, 1, 1) and ew.work == WorkShape()  # 4x1x1 not offered
    # unknown kernel: by kind, then the default; work not offered: the kernel's first
    other = KernelSignature("new_conv", (64, 64, 8), "conv", work=(WorkShape(2, 1, 2),))
    assert table(other, DeviceLimits()).workgroup == (8, 8, 1)
    assert table(other, DeviceLimits()).work == WorkShape(2, 1, 2)
    assert table(KernelSignature("x", (9, 9, 9)), DeviceLimits()).workgroup == (64, 1, 1)
    small = DeviceLimits(max_invocations=32, max_size=(4, 256, 64))
    assert table(sig, small).workgroup == (4, 8, 1)  # x clamped to 4, then 4 x 8 fits


def test_heuristic_prefers_the_kernels_first_work_shape_on_ties():
    sig = conv((64, 64, 16))
    choice = heuristic(sig, WIDE)
    ctx = Context.of(sig, WIDE)
    assert len(passed(choice.candidate, ctx)) == 5
    assert choice.work == sig.work[0]
    assert rank(choice.candidate, ctx) == min(rank(c, ctx) for c in candidates(sig, WIDE))


def test_heuristic_uses_the_parallel_units():
    # 8 x 8 x 2 items: 64-invocation groups make 2 groups, too few for 4 units
    sig = KernelSignature("binary", (8, 8, 2), "elementwise", work=(WorkShape(),))
    assert heuristic(sig, DeviceLimits()).workgroup == (8, 8, 1)  # ties: closest to 64
    four = heuristic(sig, DeviceLimits(parallel_units=4))
    gx, gy, gz = four.groups(sig.space)
    # rule I: a multiple of 4 groups, at least MIN_WAVES (2) waves: 8 groups of 16
    assert (gx * gy * gz) % 4 == 0 and gx * gy * gz >= 8 and four.size == 16


def test_choose_dispatches_on_policy():
    sig = conv()
    assert choose(sig, DeviceLimits(), "table").source == "table"
    assert choose(sig, DeviceLimits()) == heuristic(sig, DeviceLimits())
    with pytest.raises(ValueError, match="policy"):
        choose(sig, DeviceLimits(), "fastest")
    with pytest.raises(ValueError, match="time_fn"):
        choose(sig, DeviceLimits(), "tune")
