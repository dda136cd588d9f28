"""Planner output: which shared object (or arena offset) each tensor uses.

- ObjectPlan: tensors -> shared buffers; an object is as large as its largest tensor.
- TexturePlan: tensors -> shared 2-D array textures; an object's extent is the
  element-wise max of its tensors' extents.
- ArenaPlan: tensors -> byte offsets into one buffer, each a multiple of `alignment`.
All maps are keyed by tensor id (TensorUsage.tensor).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from engine.memory.records import Extent, volume


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


def object_plan(strategy: str, records, assignment: list[int], sizes: list[int]) -> ObjectPlan:
    """Build an ObjectPlan from per-record object ids (records[i] -> assignment[i])."""
    ids = {r.tensor: obj for r, obj in zip(records, assignment, strict=True)}
    return ObjectPlan(strategy, ids, tuple(sizes))
