"""Rules I-V on hand-computed cases."""

from __future__ import annotations

import pytest

from engine.gpu.workgroups import Candidate, Context, DeviceLimits, KernelSignature, WorkShape
from engine.gpu.workgroups.rules import (
    cache_lines,
    full_waves,
    min_loads,
    min_padding,
    passed,
    whole_subgroups,
)
from tests.workgroups.util import ONE, conv, depthwise


def ctx(sig, limits=None) -> Context:
    return Context.of(sig, limits or DeviceLimits())


def cand(wg, work=(1, 1, 1)) -> Candidate:
    return Candidate(wg, WorkShape(*work))


def test_rule_i_full_waves():
    sig = KernelSignature("k", (64, 64, 1), work=ONE)
    four = ctx(sig, DeviceLimits(parallel_units=4))
    assert full_waves(cand((8, 8, 1)), four)  # 8 x 8 = 64 groups = 16 waves of 4
    odd = KernelSignature("k", (48, 16, 1), work=ONE)
    assert not full_waves(cand((16, 16, 1)), ctx(odd, DeviceLimits(parallel_units=4)))  # 3
    assert full_waves(cand((16, 16, 1)), ctx(odd, DeviceLimits(parallel_units=3)))
    assert full_waves(cand((16, 16, 1)), ctx(odd))  # units unknown: no opinion


def test_rule_ii_whole_subgroups():
    sig = KernelSignature("k", (64, 64, 4), work=ONE)
    assert whole_subgroups(cand((8, 4, 1)), ctx(sig))  # 32 of 32
    assert not whole_subgroups(cand((8, 2, 1)), ctx(sig))  # 16
    wave64 = ctx(sig, DeviceLimits(subgroup_min=32, subgroup_max=64))
    assert not whole_subgroups(cand((8, 4, 1)), wave64)
    assert whole_subgroups(cand((4, 4, 4)), wave64)


def test_rule_iii_cache_lines():
    sig = KernelSignature("k", (64, 64, 4), work=(WorkShape(1, 1, 1), WorkShape(2, 1, 1)))
    assert cache_lines(cand((4, 8, 1)), ctx(sig))  # 4 x 16 B = 64 B
    assert cache_lines(cand((2, 16, 1), (2, 1, 1)), ctx(sig))  # 2 x 2 x 16 B
    assert not cache_lines(cand((2, 16, 1)), ctx(sig))  # 32 B
    fp16 = KernelSignature("k", (64, 64, 4), bytes_x=8, work=ONE)
    assert not cache_lines(cand((4, 8, 1)), ctx(fp16))  # 32 B
    assert cache_lines(cand((8, 4, 1)), ctx(fp16))


def test_rule_iv_min_padding():
    sig = KernelSignature("k", (100, 1, 1), work=ONE)
    c = ctx(sig)
    assert c.min_waste == pytest.approx(0.04)  # 13 x 8 = 104 (8: the smallest group)
    assert min_padding(cand((8, 1, 1)), c)
    assert not min_padding(cand((16, 1, 1)), c)  # 7 x 16 = 112: 12 % > 4 % + 1/16
    assert not min_padding(cand((32, 1, 1)), c)  # 128: 28 %


def test_rule_iv_relative_to_the_least_padded():
    sig = KernelSignature("k", (3, 3, 3), work=ONE)  # every group of >= 8 pads
    c = ctx(sig)
    assert c.min_waste == pytest.approx(48 / 27 - 1)  # e.g. 4x4x1 -> 4 x 4 x 3
    assert min_padding(cand((4, 4, 1)), c)
    assert min_padding(cand((1, 2, 4)), c)
    assert not min_padding(cand((4, 4, 4)), c)  # 64 of 27


def test_rule_v_conv_pixels_about_twice_slices():
    c = ctx(conv((64, 64, 16)))
    assert min_loads(cand((4, 2, 4)), c)  # P 8, Z 4: P/Z 2
    assert min_loads(cand((2, 2, 4)), c)  # P/Z 1: edge of the factor-2 band
    assert min_loads(cand((4, 4, 4)), c)  # P/Z 4: the other edge
    assert not min_loads(cand((2, 1, 4)), c)  # 0.5
    assert not min_loads(cand((8, 8, 1)), c)  # 64
    assert not min_loads(cand((8, 1, 1), (4, 1, 4)), c)  # covers 32 px x 4 slices: 8
    assert min_loads(cand((2, 1, 2), (4, 1, 4)), c)  # 8 px x 8 slices: 1


def test_rule_v_depthwise_one_slice_largest_plane():
    c = ctx(depthwise((64, 64, 8)))  # plane cap: min(256, 64 x 64)
    assert min_loads(cand((16, 16, 1)), c)
    assert min_loads(cand((32, 8, 1)), c)
    assert not min_loads(cand((8, 8, 1)), c)
    assert not min_loads(cand((16, 8, 2)), c)
    small = ctx(depthwise((8, 8, 8)))
    assert min_loads(cand((8, 8, 1)), small)  # 64: all of the 8x8 plane
    assert min_loads(cand((4, 2, 1), (2, 4, 1)), small)  # 4 x 2 blocks cover it
    assert not min_loads(cand((2, 2, 1), (2, 4, 1)), small)


def test_rule_v_other_kinds_have_no_opinion():
    sig = KernelSignature("binary", (4096, 4, 1), "elementwise", work=ONE)
    assert min_loads(cand((1, 1, 1)), ctx(sig))


def test_passed_names_the_rules():
    sig = KernelSignature("k", (64, 64, 1), work=ONE)
    assert passed(cand((8, 8, 1)), ctx(sig, DeviceLimits(parallel_units=4))) == (
        "I",
        "II",
        "III",
        "IV",
        "V",
    )
    assert passed(cand((2, 8, 1)), ctx(sig)) == ("I", "IV", "V")  # 16 invocations, 32 B
