"""greedy_by_size: largest tensors first, each into the best-fitting compatible object.

- sort tensors by size, largest first (ties: earlier first op);
- candidates: objects none of whose tensors overlap this one in time (each object
  keeps its disjoint intervals sorted, so the test is one bisect);
- take the smallest candidate that is large enough; since sizes only decrease,
  every existing object is large enough and no object ever grows;
- no candidate: a new object of this tensor's size.
O(n * objects * log n).
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence

from engine.memory.plan import ObjectPlan, object_plan
from engine.memory.records import TensorUsage


class Intervals:
    """Disjoint [first, last] intervals sorted by first (so also by last)."""

    def __init__(self) -> None:
        self.firsts: list[int] = []
        self.lasts: list[int] = []

    def is_free(self, first: int, last: int) -> bool:
        k = bisect.bisect_right(self.firsts, last)  # intervals [0, k) start at or before `last`
        return k == 0 or self.lasts[k - 1] < first

    def add(self, first: int, last: int) -> None:
        k = bisect.bisect_right(self.firsts, last)
        self.firsts.insert(k, first)
        self.lasts.insert(k, last)


def greedy_by_size(records: Sequence[TensorUsage]) -> ObjectPlan:
    """Greedy-by-size shared buffers."""
    sizes: list[int] = []
    times: list[Intervals] = []
    assignment = [0] * len(records)
    for i in sorted(range(len(records)), key=lambda i: (-records[i].size, records[i].first, i)):
        r = records[i]
        free = [o for o in range(len(sizes)) if times[o].is_free(r.first, r.last)]
        if free:
            obj = min(free, key=lambda o: (sizes[o], o))  # all are >= r.size: best fit
        else:
            obj = len(sizes)
            sizes.append(r.size)
            times.append(Intervals())
        times[obj].add(r.first, r.last)
        assignment[i] = obj
    return object_plan("greedy_by_size", records, assignment, sizes)
