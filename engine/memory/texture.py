"""Texture strategies: shared objects are 2-D array textures with extent (w, h, layers).

A tensor fits an object when width, height and layer count are all large enough;
growing an object takes the element-wise max of the extents; an object costs
w * h * layers * texel_bytes. Choosing among candidate objects (both strategies):
- cost of a candidate = bytes it must grow by (0 when the tensor fits);
- take the cheapest, ties to the smallest object; a new object when no candidate
  is cheaper than the tensor's own bytes.

texture_greedy (greedy in order, see greedy.py), O(n * pool):
- walk tensors by first op; release objects whose tensor ended before it;
- choose among the free objects as above.
texture_greedy_by_size (see greedy_by_size.py), O(n * objects * log n):
- walk tensors by bytes, largest first;
- choose among objects with no tensor overlapping in time, as above.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Sequence

from engine.memory.greedy_by_size import Intervals
from engine.memory.plan import TexturePlan
from engine.memory.records import Extent, TensorUsage, volume


def texel_bytes(records: Sequence[TensorUsage]) -> int:
    """The one texel size of all records (16 fp32, 8 fp16); mixed formats cannot share."""
    missing = [r.tensor for r in records if r.extent is None]
    if missing:
        raise ValueError(f"tensors {missing[:5]} have no texture extent")
    sizes = {r.texel_bytes for r in records}
    if len(sizes) > 1:
        raise ValueError(f"records mix texel sizes {sorted(sizes)}: plan each format apart")
    return sizes.pop() if sizes else 16


def grow(a: Extent, b: Extent) -> Extent:
    return max(a[0], b[0]), max(a[1], b[1]), max(a[2], b[2])


def choose(extents: list[Extent], candidates: Iterable[int], e: Extent) -> int | None:
    """Cheapest candidate object for extent `e`, or None when a new object is cheaper."""
    best, best_key = None, (volume(e), 0)
    for o in candidates:
        key = (volume(grow(extents[o], e)) - volume(extents[o]), volume(extents[o]))
        if key < best_key:
            best, best_key = o, key
    return best


def texture_greedy(records: Sequence[TensorUsage]) -> TexturePlan:
    """Greedy-in-order shared textures."""
    texel = texel_bytes(records)
    extents: list[Extent] = []
    assignment: dict[int, int] = {}
    pool: set[int] = set()
    in_use: list[tuple[int, int]] = []  # heap of (last op, object id)
    for r in sorted(records, key=lambda r: r.first):
        while in_use and in_use[0][0] < r.first:
            pool.add(heapq.heappop(in_use)[1])
        obj = choose(extents, sorted(pool), r.extent)
        if obj is None:
            obj = len(extents)
            extents.append(r.extent)
        else:
            pool.remove(obj)
            extents[obj] = grow(extents[obj], r.extent)
        heapq.heappush(in_use, (r.last, obj))
        assignment[r.tensor] = obj
    return TexturePlan("texture_greedy", assignment, tuple(extents), texel)


def texture_greedy_by_size(records: Sequence[TensorUsage]) -> TexturePlan:
    """Greedy-by-size shared textures."""
    texel = texel_bytes(records)
    extents: list[Extent] = []
    times: list[Intervals] = []
    assignment: dict[int, int] = {}
    for r in sorted(records, key=lambda r: (-volume(r.extent), r.first)):
        free = (o for o in range(len(extents)) if times[o].is_free(r.first, r.last))
        obj = choose(extents, free, r.extent)
        if obj is None:
            obj = len(extents)
            extents.append(r.extent)
            times.append(Intervals())
        else:
            extents[obj] = grow(extents[obj], r.extent)
        times[obj].add(r.first, r.last)
        assignment[r.tensor] = obj
    return TexturePlan("texture_greedy_by_size", assignment, tuple(extents), texel)
