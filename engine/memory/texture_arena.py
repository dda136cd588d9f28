"""texture_arena: tensors folded into whole layers of a few shared 2-D array textures.

Sharing whole textures (texture.py) wastes what a pyramid of shapes cannot share: a
64x64 tensor cannot reuse a dead 128x128 one's texels. Here a tensor of extent
(w, h, slices) is folded: `a` x `b` of its slices side by side in each layer of an
object of (W, H) texels (a = W // w, b = H // h, no more than it has slices), so it
covers ceil(slices / (a * b)) whole layers, and tensors alive at once use different
layers (a WebGPU dispatch may not read and write one layer through two views). Then:

- groups: the object (W, H) covers the widest and tallest tensor left, rounded up to a
  multiple of some tensor's width and height (the candidate where the tensors left fold
  into the fewest texels); a tensor joins when folded it costs at most `slack` times its
  own bytes; the others form the next groups, and so on (a group of none: the
  largest-area tensor's extent);
- per group one object; its tensors' layer ranges are an arena plan in units of a
  layer (arena.py: heuristic, then the exact search), so the object is close to the
  most layers its tensors have alive at once;
- an object keeps <= MAX_LAYERS layers: tensors planned past it go to the next group;
- planned once per slack in SLACKS; the smallest total wins (ties: fewer objects).
O(slacks * groups * arena). Kernels address a folded tensor through the `tiles` of the
plan (shaders/engine/tensor.wgsl), the engine binds its layers as a view of their own.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from engine.memory.arena import arena
from engine.memory.plan import TexturePlan, Tiles, footprint
from engine.memory.records import Extent, TensorUsage, volume
from engine.memory.texture import texel_bytes

# WebGPU's default max_texture_array_layers and max_texture_dimension_2d (every adapter
# has at least these), so the same plan runs on every device.
MAX_LAYERS = 256
MAX_DIMENSION = 8192
# Waste a tensor may bring into a group. The best differs per model (fetched models and
# shaped graphs, every intermediate a texture): 1 for face detection (1.61x the bound at
# 1, 2.11x at inf), 1.25 palm detection, 1.5 pose detection, 4 selfie segmentation and
# pose landmarks, inf (one object) for face_landmark, hands, MobileNet, DeepLab.
SLACKS = (1.0, 1.25, 1.5, 2.0, 4.0, float("inf"))


def tiles_in(extent: Extent, width: int, height: int) -> Tiles:
    """Slices side by side (across, down) of a tensor of `extent` in a (width, height) layer."""
    w, h, slices = extent
    across = max(1, min(width // w, slices))
    down = max(1, min(height // h, -(-slices // across)))
    return across, down


def _folded_volume(extent: Extent, width: int, height: int) -> int:
    return width * height * footprint(extent, tiles_in(extent, width, height))[3]


def _object_extent(left: list[TensorUsage]) -> tuple[int, int]:
    """(W, H) of the next object: no narrower (lower) than the widest (tallest) tensor left,
    and a multiple of some tensor's width (height), so its tiles fill a layer (DeepLab's
    129 and 33 wide tensors: 132); of these the one where the tensors left fold into the
    fewest texels, ties to the smaller layer."""
    extents = Counter(r.extent for r in left)
    width, height = max(e[0] for e in extents), max(e[1] for e in extents)
    widths = {-(-width // e[0]) * e[0] for e in extents}
    heights = {-(-height // e[1]) * e[1] for e in extents}
    candidates = [(w, h) for w in widths for h in heights if max(w, h) <= MAX_DIMENSION]

    def texels(size: tuple[int, int]) -> int:
        return sum(n * _folded_volume(e, *size) for e, n in extents.items())

    return min(candidates, key=lambda size: (texels(size), size[0] * size[1], size))


def _members(left: list[TensorUsage], slack: float) -> tuple[int, int, list[TensorUsage]]:
    """The next group's (W, H) and tensors."""
    width, height = _object_extent(left)
    fits = [r for r in left if _folded_volume(r.extent, width, height) <= slack * volume(r.extent)]
    if not fits:  # no tensor is both the widest and the tallest: the largest area leads
        lead = max(left, key=lambda r: (r.extent[0] * r.extent[1], volume(r.extent)))
        width, height = lead.extent[:2]
        fits = [r for r in left if r.extent[0] <= width and r.extent[1] <= height]
        fits = [
            r for r in fits if _folded_volume(r.extent, width, height) <= slack * volume(r.extent)
        ]
    return width, height, fits


def _layer_arena(in_layers: list[TensorUsage], memo: dict) -> dict[int, int]:
    """Layer offsets of one group (arena.py in units of a layer), memoised: slacks often
    form the same groups."""
    key = tuple(in_layers)
    if key not in memo:
        memo[key] = arena(in_layers, alignment=1).offsets
    return memo[key]


def _plan(records: Sequence[TensorUsage], slack: float, texel: int, memo: dict) -> TexturePlan:
    extents: list[Extent] = []
    assignment: dict[int, int] = {}
    layers: dict[int, int] = {}
    tiles: dict[int, Tiles] = {}
    left = sorted(records, key=lambda r: (r.first, r.tensor))
    while left:
        width, height, group = _members(left, slack)
        folds = {r.tensor: tiles_in(r.extent, width, height) for r in group}
        counts = {r.tensor: footprint(r.extent, folds[r.tensor])[3] for r in group}
        in_layers = [TensorUsage(r.tensor, counts[r.tensor], r.first, r.last) for r in group]
        offsets = _layer_arena(in_layers, memo)
        base = min(offsets.values())  # one tensor at layer 0: every group keeps one
        offsets = {t: o - base for t, o in offsets.items()}
        cap = max(MAX_LAYERS, *counts.values())
        kept = [r for r in group if offsets[r.tensor] + counts[r.tensor] <= cap]
        top = max(offsets[r.tensor] + counts[r.tensor] for r in kept)
        for r in kept:
            assignment[r.tensor] = len(extents)
            layers[r.tensor], tiles[r.tensor] = offsets[r.tensor], folds[r.tensor]
        extents.append((width, height, top))
        done = {r.tensor for r in kept}
        left = [r for r in left if r.tensor not in done]
    return TexturePlan("texture_arena", assignment, tuple(extents), texel, layers, tiles)


def texture_arena(records: Sequence[TensorUsage]) -> TexturePlan:
    """Folded tensors in whole layers of shared textures, the layers planned as an arena."""
    texel = texel_bytes(records)
    memo: dict = {}
    plans = [_plan(records, slack, texel, memo) for slack in SLACKS]
    return min(plans, key=lambda p: (p.total_bytes, p.objects))
