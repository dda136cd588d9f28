"""Planner output: which shared object (or arena offset) each tensor uses.

- ObjectPlan: tensors -> shared buffers; an object is as large as its largest tensor.
- TexturePlan: tensors -> shared 2-D array textures. A tensor of extent (W, R, S) uses
  layers [layer, layer + ceil(S / (a * b))) of its object, `a` x `b` slices side by side
  in each ("tiles": slice s at texel (x + W * (s % a), row + R * (s / a % b)), layer
  layer + s / (a * b)); by default layer 0 and 1 x 1 tiles (the tensor's own extent).
- ArenaPlan: tensors -> byte offsets into one buffer, each a multiple of `alignment`.
All maps are keyed by tensor id (TensorUsage.tensor).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from engine.memory.records import Extent, volume

Tiles = tuple[int, int]  # (across, down): slices side by side in one layer


@dataclass(frozen=True)
class ObjectPlan:
    strategy: str
    assignment: Mapping[int, int]  # tensor id -> object id
    object_sizes: tuple[int, ...]  # bytes per object id

    @property
    def total_bytes(self) -> int:
        return sum(self.object_sizes)

    @property
    def objects(self) -> int:
        return len(self.object_sizes)


@dataclass(frozen=True)
class TexturePlan:
    strategy: str
    assignment: Mapping[int, int]  # tensor id -> object id
    extents: tuple[Extent, ...]  # (width, height, layers) per object id
    texel_bytes: int  # 16 fp32 rgba, 8 fp16 rgba
    layers: Mapping[int, int] = field(default_factory=dict)  # tensor id -> first layer (0)
    tiles: Mapping[int, Tiles] = field(default_factory=dict)  # tensor id -> tiles (1, 1)

    def footprint(self, tensor: int, extent: Extent) -> tuple[int, int, int, int]:
        """(width, height, first layer, layer count) that a tensor of `extent` covers."""
        return footprint(extent, self.tiles.get(tensor, (1, 1)), self.layers.get(tensor, 0))

    @property
    def total_bytes(self) -> int:
        return sum(volume(e) for e in self.extents) * self.texel_bytes

    @property
    def objects(self) -> int:
        return len(self.extents)


@dataclass(frozen=True)
class ArenaPlan:
    strategy: str
    offsets: Mapping[int, int]  # tensor id -> byte offset into the arena
    size: int  # arena bytes
    alignment: int

    @property
    def total_bytes(self) -> int:
        return self.size

    @property
    def objects(self) -> int:
        return 1 if self.size else 0


Plan = ObjectPlan | TexturePlan | ArenaPlan


def footprint(extent: Extent, tiles: Tiles, layer: int = 0) -> tuple[int, int, int, int]:
    """(width, height, first layer, layer count) of a tensor of `extent` folded into
    `tiles` per layer from `layer` on."""
    (w, h, slices), (across, down) = extent, tiles
    return w * across, h * down, layer, -(-slices // (across * down))


def object_plan(strategy: str, records, assignment: list[int], sizes: list[int]) -> ObjectPlan:
    """Build an ObjectPlan from per-record object ids (records[i] -> assignment[i])."""
    ids = {r.tensor: obj for r, obj in zip(records, assignment, strict=True)}
    return ObjectPlan(strategy, ids, tuple(sizes))
