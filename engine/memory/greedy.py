"""greedy: greedy in order (Pisarchyk & Lee 2020, "Efficient Memory Management for
Deep Neural Net Inference", TFLite GPU's GreedyInOrderAssignment).

- walk tensors in order of their first op;
- objects whose tensor's last op is before this first op go back to the pool
  (a heap of in-use objects keyed by release time);
- the tensor takes the free object closest in size by absolute difference
  (bisect in the pool sorted by size; a tie goes to the larger one, which
  need not grow), growing it if smaller, or a new object when the pool is empty;
- the object is in use until the tensor's last op.
O(n log n) comparisons (the sorted-list insert moves memory, O(n) with a tiny constant).
"""

from __future__ import annotations

import bisect
import heapq
from collections.abc import Sequence

from engine.memory.plan import ObjectPlan, object_plan
from engine.memory.records import TensorUsage


def greedy(records: Sequence[TensorUsage]) -> ObjectPlan:
    """Greedy-in-order shared buffers."""
    sizes: list[int] = []
    assignment = [0] * len(records)
    pool: list[tuple[int, int]] = []  # free (size, object id), sorted
    in_use: list[tuple[int, int]] = []  # heap of (last op, object id)
    for i in sorted(range(len(records)), key=lambda i: (records[i].first, i)):
        r = records[i]
        while in_use and in_use[0][0] < r.first:
            obj = heapq.heappop(in_use)[1]
            bisect.insort(pool, (sizes[obj], obj))
        if not pool:
            obj = len(sizes)
            sizes.append(r.size)
        else:
            k = bisect.bisect_left(pool, (r.size, -1))  # pool[k] = smallest with size >= r.size
            if k == len(pool) or (k > 0 and r.size - pool[k - 1][0] < pool[k][0] - r.size):
                k -= 1
            obj = pool.pop(k)[1]
            sizes[obj] = max(sizes[obj], r.size)
        heapq.heappush(in_use, (r.last, obj))
        assignment[i] = obj
    return object_plan("greedy", records, assignment, sizes)
