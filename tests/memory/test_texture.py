import pytest

from engine.memory import TensorUsage, check_plan, texture_greedy, texture_greedy_by_size


def tex(k, extent, first, last, texel=16):
    w, h, layers = extent
    return TensorUsage(k, w * h * layers * texel, first, last, extent)


def test_greedy_grows_an_object_when_cheaper_than_a_new_one():
    # B (8x8x2) after A (8x8x1): growing A's object to 8x8x2 adds 64 texels,
    # a new one would take 128, so they share one 8x8x2 texture.
    records = [tex(0, (8, 8, 1), 0, 0), tex(1, (8, 8, 2), 1, 1)]
    plan = texture_greedy(records)
    assert plan.extents == ((8, 8, 2),)
    assert plan.total_bytes == 8 * 8 * 2 * 16
    assert check_plan(records, plan) == []


def test_greedy_opens_a_new_object_when_growth_costs_more():
    # A is 64x1x1, B 1x64x1: sharing would need 64x64x1 (4096 texels) against 64 + 64.
    records = [tex(0, (64, 1, 1), 0, 0), tex(1, (1, 64, 1), 1, 1)]
    plan = texture_greedy(records)
    assert sorted(plan.extents) == [(1, 64, 1), (64, 1, 1)]


def test_greedy_by_size_prefers_the_smallest_fitting_object():
    records = [
        tex(0, (16, 16, 2), 0, 1),
        tex(1, (8, 8, 1), 0, 1),
        tex(2, (8, 8, 1), 2, 3),  # fits both freed objects: takes the 8x8x1 one
        tex(3, (16, 16, 2), 3, 3),
    ]
    plan = texture_greedy_by_size(records)
    assert plan.assignment[2] == plan.assignment[1]
    assert plan.assignment[3] == plan.assignment[0]
    assert plan.total_bytes == (16 * 16 * 2 + 8 * 8) * 16


def test_fp16_texels():
    records = [tex(0, (4, 4, 1), 0, 0, texel=8), tex(1, (4, 4, 1), 1, 1, texel=8)]
    assert texture_greedy(records).total_bytes == 4 * 4 * 8


def test_mixed_texel_sizes_are_refused():
    with pytest.raises(ValueError, match="mix texel sizes"):
        texture_greedy([tex(0, (1, 1, 1), 0, 0, 16), tex(1, (1, 1, 1), 1, 1, 8)])
    with pytest.raises(ValueError, match="no texture extent"):
        texture_greedy_by_size([TensorUsage(0, 16, 0, 0)])
