"""Planner input: one TensorUsage per intermediate tensor, and the figures derived from it.

Contract:
- `size` is the bytes the engine stores (PHWC4, chosen precision);
- [first, last] are op indices in execution order, both inclusive: the op that
  writes the tensor and the last op that reads it (first when nothing reads it);
- two tensors may share memory only when their intervals are disjoint;
- `extent` (width, height, layers) is set when the tensor can live in a texture.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from dataclasses import dataclass

from engine.model.ir import Graph, tensors_read
from engine.model.layout import phwc4_bytes, texture_extent

Extent = tuple[int, int, int]


@dataclass(frozen=True)
class TensorUsage:
    tensor: int  # tensor id in the graph (unique within one list of records)
    size: int  # bytes
    first: int  # index of the op that writes it
    last: int  # index of the last op that reads it (inclusive)
    extent: Extent | None = None  # texture (width, height, layers), if it has one
    name: str = ""

    def __post_init__(self) -> None:
        if self.size < 0 or not 0 <= self.first <= self.last:
            raise ValueError(f"bad usage record {self}: need size >= 0, 0 <= first <= last")
        if self.extent is not None and (min(self.extent) < 1 or self.size % volume(self.extent)):
            raise ValueError(f"bad usage record {self}: size must be a multiple of the extent")

    @property
    def texel_bytes(self) -> int:
        """Bytes per texel of its texture (16 fp32 rgba, 8 fp16); needs `extent`."""
        assert self.extent is not None, f"tensor {self.tensor} has no texture extent"
        return self.size // volume(self.extent)


def volume(extent: Extent) -> int:
    w, h, layers = extent
    return w * h * layers


def overlaps(a: TensorUsage, b: TensorUsage) -> bool:
    """True when the two lifetimes share an op (then they cannot share memory)."""
    return a.first <= b.last and b.first <= a.last


def usage_records(graph: Graph, bytes_per_element: int = 4) -> list[TensorUsage]:
    """Usage records of the graph's intermediate tensors, ordered by (first, tensor id).

    Intermediate = written by an op, and not a graph input, graph output or constant.
    Sizes are PHWC4 bytes at `bytes_per_element` (4 fp32, 2 fp16) for every tensor.
    """
    excluded = set(graph.inputs) | set(graph.outputs)
    first: dict[int, int] = {}
    last: dict[int, int] = {}
    for i, op in enumerate(graph.ops):
        for t in op.outputs:
            if t >= 0 and t not in excluded and not graph.tensors[t].is_constant:
                first.setdefault(t, i)
                last.setdefault(t, i)
        for t in tensors_read(op):  # inputs and fused epilogue operands
            if t in last:
                last[t] = max(last[t], i)
    records = []
    for t, f in first.items():
        tensor = graph.tensors[t]
        size = phwc4_bytes(tensor.shape, bytes_per_element)
        extent = texture_extent(tensor.shape) if size else None
        records.append(TensorUsage(t, size, f, last[t], extent, tensor.name))
    return sorted(records, key=lambda r: (r.first, r.tensor))


def naive_bytes(records: Sequence[TensorUsage]) -> int:
    """Bytes with one object per tensor."""
    return sum(r.size for r in records)


def lower_bound(records: Sequence[TensorUsage]) -> int:
    """Max over op steps of the bytes of the live tensors (no plan can do better).

    Sweep in order of `first`; a heap of (last, size) drops tensors that died before.
    """
    live: list[tuple[int, int]] = []
    live_bytes = best = 0
    for r in sorted(records, key=lambda r: r.first):
        while live and live[0][0] < r.first:
            live_bytes -= heapq.heappop(live)[1]
        heapq.heappush(live, (r.last, r.size))
        live_bytes += r.size
        best = max(best, live_bytes)
    return best
