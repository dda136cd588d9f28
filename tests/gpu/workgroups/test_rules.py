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
from tests.helpers.workgroups import ONE, conv, depthwise


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
    assert full_waves(cand((8, 8, 1)), ctx(odd, DeviceLimits(parallel_units=4)))  # 12
    assert full_waves(cand((16, 16, 1)), ctx(odd))  # units unknown: no opinion


def test_rule_i_wants_two_waves_when_the_space_has_them():
    sig = KernelSignature("k", (64, 64, 1), work=ONE)
    two = ctx(sig, DeviceLimits(parallel_units=2))
    assert two.most_groups == 512  # 4096 items in groups of 8
    assert not full_waves(cand((32, 64, 1)), two)  # 2 groups: one wave of 2
    assert full_waves(cand((32, 32, 1)), two)  # 4 groups: MIN_WAVES = 2 waves
    tiny = KernelSignature("k", (8, 2, 1), work=ONE)  # 16 items: at most 2 groups of 8
    assert ctx(tiny, DeviceLimits(parallel_units=2)).most_groups == 2
    assert full_waves(cand((8, 1, 1)), ctx(tiny, DeviceLimits(parallel_units=2)))


def test_rule_ii_whole_subgroups():
    sig = KernelSignature("k", (64, 64, 4), work=ONE)
    assert whole_subgroups(cand((8, 4, 1)), ctx(sig))  # 32 of 32
    assert not whole_subgroups(cand((8, 2, 1)), ctx(sig))  # 16
    wave64 = ctx(sig, DeviceLimits(subgroup_min=32, subgroup_max=64))
    assert not whole_subgroups(cand((8, 4, 1)), wave64)
    assert whole_subgroups(cand((4, 4, 4)), wave64)


def test_rule_iii_cache_lines():
    sig = KernelSignature("k", (64, 64, 4), work=(WorkShape(1, 1, 1), WorkShape(2, 1, 1)))
    eight = DeviceLimits(subgroup_min=8, subgroup_max=8)
    assert cache_lines(cand((8, 4, 1)), ctx(sig, eight))  # 8 x 16 B = 128 B, 8 wide
    assert cache_lines(cand((8, 2, 1), (2, 1, 1)), ctx(sig, eight))  # 8 x 2 x 16 B
    assert not cache_lines(cand((4, 8, 1)), ctx(sig, eight))  # 64 B but 4 < 8 wide
    assert not cache_lines(cand((2, 16, 1)), ctx(sig))  # 32 B
    fp16 = KernelSignature("k", (64, 64, 4), bytes_x=8, work=ONE)
    assert cache_lines(cand((8, 4, 1)), ctx(fp16, eight))  # 64 B
    assert cache_lines(cand((32, 2, 1)), ctx(fp16))  # default subgroup 32: 32 wide, 256 B
    assert not cache_lines(cand((16, 4, 1)), ctx(fp16))  # 128 B, but narrower than 32


def test_rule_iii_narrow_spaces_need_not_be_a_subgroup_wide():
    sig = KernelSignature("k", (3, 3, 32), work=(WorkShape(2, 2, 1),))  # 2 invocations wide
    assert cache_lines(cand((2, 2, 8), (2, 2, 1)), ctx(sig))  # 2 x 2 x 16 B = 64 B
    assert not cache_lines(cand((1, 2, 16), (2, 2, 1)), ctx(sig))  # 32 B


def test_rule_iv_min_padding():
    sig = KernelSignature("k", (100, 1, 1), work=ONE)
    c = ctx(sig)
    assert c.min_waste == pytest.approx(0.04)  # 13 x 8 = 104 (8: the smallest group)
    assert min_padding(cand((8, 1, 1)), c)
    assert min_padding(cand((16, 1, 1)), c)  # 7 x 16 = 112: 12 % <= 4 % + 1/8
    assert not min_padding(cand((32, 1, 1)), c)  # 128: 28 %


def test_rule_iv_relative_to_the_least_padded():
    sig = KernelSignature("k", (3, 3, 3), work=ONE)  # every group of >= 8 pads
    c = ctx(sig)
    assert c.min_waste == pytest.approx(48 / 27 - 1)  # e.g. 4x4x1 -> 4 x 4 x 3
    assert min_padding(cand((4, 4, 1)), c)
    assert min_padding(cand((1, 2, 4)), c)
    assert not min_padding(cand((4, 4, 4)), c)  # 64 of 27


CONV1X1_WORK = tuple(WorkShape(p, 1, b) for p in (8, 4, 16) for b in (4, 2, 1))
EIGHT = DeviceLimits(subgroup_min=8, subgroup_max=8)


def test_rule_v_conv_block_pixels_about_twice_slices():
    c = ctx(conv((1024, 1, 16), CONV1X1_WORK), EIGHT)
    assert c.conv_block == 32  # the preferred 8 pixels x 4 slices
    assert min_loads(cand((64, 1, 1), (8, 1, 4)), c)  # P/Z 2, 32 outputs
    assert min_loads(cand((64, 1, 1), (16, 1, 4)), c)  # P/Z 4: the band's edge
    assert min_loads(cand((64, 1, 1), (4, 1, 4)), c)  # P/Z 1, 16 = half the preferred
    assert not min_loads(cand((64, 1, 1), (16, 1, 2)), c)  # P/Z 8
    assert not min_loads(cand((64, 1, 1), (4, 1, 1)), c)  # P/Z 4 but 4 outputs < 16
    assert not min_loads(cand((64, 1, 1), (8, 1, 1)), c)  # P/Z 8


def test_rule_v_conv_band_at_the_space_edges():
    one_pixel = ctx(conv((1, 1, 351), (WorkShape(1, 1, 4), WorkShape(1, 1, 2))), EIGHT)
    assert min_loads(cand((1, 1, 8), (1, 1, 4)), one_pixel)  # 1 pixel is all there is
    one_slice = ctx(conv((256, 1, 1), (WorkShape(8, 1, 1), WorkShape(4, 1, 1))), EIGHT)
    assert min_loads(cand((32, 1, 1), (8, 1, 1)), one_slice)  # Z is every slice: P free


def test_rule_v_subgroups_span_pixels_of_one_slice():
    c = ctx(conv((144, 1, 32), CONV1X1_WORK), EIGHT)  # 18 invocations along pixels
    assert min_loads(cand((8, 1, 2), (8, 1, 4)), c)
    assert not min_loads(cand((2, 1, 4), (8, 1, 4)), c)  # lanes on 4 slices: 4 weight loads
    narrow = ctx(conv((9, 1, 32), CONV1X1_WORK), EIGHT)  # 2 invocations along pixels
    assert min_loads(cand((2, 1, 4), (8, 1, 2)), narrow)


def test_rule_v_depthwise_plane_of_one_slice():
    c = ctx(depthwise((64, 64, 8)), EIGHT)
    assert min_loads(cand((8, 8, 1)), c)  # 64 pixels, one slice per invocation
    assert min_loads(cand((8, 4, 2), (2, 4, 1)), c)  # 16 x 16 pixels
    assert not min_loads(cand((4, 1, 2), (2, 4, 1)), c)  # 4 invocations: < a subgroup
    assert not min_loads(cand((8, 1, 8)), c)  # 8 pixels < DEPTHWISE_MIN_PLANE
    small = ctx(depthwise((3, 3, 8), (WorkShape(2, 3, 1), WorkShape(1, 2, 1))), EIGHT)
    assert min_loads(cand((2, 1, 8), (2, 3, 1)), small)  # covers all 9 pixels


def test_rule_v_other_kinds_have_no_opinion():
    sig = KernelSignature("binary", (4096, 4, 1), "elementwise", work=ONE)
    assert min_loads(cand((1, 1, 1)), ctx(sig))


def test_passed_names_the_rules():
    sig = KernelSignature("k", (64, 64, 1), work=ONE)
    assert passed(cand((32, 2, 1)), ctx(sig, DeviceLimits(parallel_units=4))) == (
        "I",
        "II",
        "III",
        "IV",
        "V",
    )
    assert passed(cand((2, 8, 1)), ctx(sig)) == ("I", "IV", "V")  # 16 invocations, 2 wide
