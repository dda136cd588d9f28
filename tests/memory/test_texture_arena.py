"""texture_arena: tensors folded into whole layers of shared textures."""

from engine.memory import TensorUsage, TexturePlan, check_plan, lower_bound, texture_greedy
from engine.memory.texture_arena import MAX_LAYERS, texture_arena, tiles_in


def tex(k, extent, first, last, texel=8):
    w, h, layers = extent
    return TensorUsage(k, w * h * layers * texel, first, last, extent)


# A pyramid as in MobileNet: the resolution halves while the slices grow 4x, so every
# tensor is 64 texels and two are alive at each op (bound: 128 texels).
PYRAMID = [tex(0, (8, 8, 1), 0, 1), tex(1, (4, 4, 4), 1, 2), tex(2, (2, 2, 16), 2, 3)]


def test_a_pyramid_folds_into_one_object_at_the_bound():
    plan = texture_arena(PYRAMID)
    assert check_plan(PYRAMID, plan) == []
    assert plan.extents == ((8, 8, 2),)
    assert plan.tiles == {0: (1, 1), 1: (2, 2), 2: (4, 4)}  # each tensor fills one layer
    assert plan.total_bytes == lower_bound(PYRAMID) == 128 * 8
    # whole shared textures cannot reuse an 8x8 layer for a 4x4 tensor: 1.5x here
    assert texture_greedy(PYRAMID).total_bytes == (64 + 64 + 64) * 8


def test_tiles():
    assert tiles_in((4, 4, 4), 8, 8) == (2, 2)
    assert tiles_in((4, 4, 3), 8, 8) == (2, 2)  # 3 slices: one layer, one tile unused
    assert tiles_in((4, 4, 1), 8, 8) == (1, 1)  # one slice: not folded
    assert tiles_in((3, 4, 9), 8, 8) == (2, 2)  # 8 // 3 = 2 across
    assert tiles_in((8, 8, 5), 8, 8) == (1, 1)


def test_tensors_alive_at_once_get_different_layers():
    recs = [tex(0, (8, 8, 2), 0, 1), tex(1, (4, 4, 8), 1, 1), tex(2, (8, 8, 1), 1, 2)]
    plan = texture_arena(recs)  # all alive at op 1: 2 + 2 (4x4x8 folded 2x2) + 1 layers
    assert check_plan(recs, plan) == []
    assert plan.extents == ((8, 8, 5),) and plan.tiles[1] == (2, 2)
    assert sorted(plan.footprint(r.tensor, r.extent)[2:] for r in recs) == [(0, 2), (2, 2), (4, 1)]
    assert plan.total_bytes == lower_bound(recs)


def test_objects_keep_to_the_layer_limit():
    # 300 one-slice tensors alive at once: 256 layers in one object, the rest in another
    recs = [tex(k, (2, 2, 1), 0, 0) for k in range(300)]
    plan = texture_arena(recs)
    assert check_plan(recs, plan) == []
    assert sorted(e[2] for e in plan.extents) == [44, MAX_LAYERS]


def test_check_plan_sees_folded_footprints():
    recs = [tex(0, (4, 4, 4), 0, 1), tex(1, (4, 4, 4), 1, 1)]
    ok = TexturePlan("ok", {0: 0, 1: 0}, ((8, 8, 2),), 8, {0: 0, 1: 1}, {0: (2, 2), 1: (2, 2)})
    assert check_plan(recs, ok) == []
    same_layer = TexturePlan("bad", {0: 0, 1: 0}, ((8, 8, 2),), 8, {}, {0: (2, 2), 1: (2, 2)})
    assert any("overlap in time" in e for e in check_plan(recs, same_layer))
    too_wide = TexturePlan("bad", {0: 0, 1: 0}, ((8, 8, 5),), 8, {1: 1}, {0: (4, 1)})
    assert any("> object" in e for e in check_plan(recs, too_wide))
    past_end = TexturePlan("bad", {0: 0, 1: 0}, ((8, 8, 2),), 8, {1: 2}, {0: (2, 2), 1: (2, 2)})
    assert any("> object" in e for e in check_plan(recs, past_end))
