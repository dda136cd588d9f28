"""naive: one object per tensor (the figure every other strategy is compared with).

O(n). Buffers: object i has tensor i's size; textures: tensor i's extent.
"""

from __future__ import annotations

from collections.abc import Sequence

from engine.memory.plan import ObjectPlan, TexturePlan, object_plan
from engine.memory.records import TensorUsage
from engine.memory.texture import texel_bytes


def naive(records: Sequence[TensorUsage]) -> ObjectPlan:
    """One buffer per tensor."""
    return object_plan("naive", records, list(range(len(records))), [r.size for r in records])


def texture_naive(records: Sequence[TensorUsage]) -> TexturePlan:
    """One texture per tensor."""
    extents = tuple(r.extent for r in records)
    ids = {r.tensor: i for i, r in enumerate(records)}
    return TexturePlan("texture_naive", ids, extents, texel_bytes(records))
