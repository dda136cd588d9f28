"""mincostflow: shared objects from a min-cost flow (Pisarchyk & Lee 2020, section 4.3).

Flow network, one unit of flow = one tensor getting an object:
- vertices: source s, sink t, and per tensor i a "left" L_i (the object i frees)
  and a "right" R_j (the object j needs);
- s -> L_i, capacity 1, cost 0: when i ends its object can be handed on once;
- s -> R_j, capacity 1, cost size_j: j takes a new object;
- L_i -> R_j when last_i < first_j, capacity 1, cost max(0, size_j - size_i):
  j reuses i's object, growing it (the paper's estimate: i's size, not the object's);
- R_j -> t, capacity 1, cost 0.
A min-cost max flow (value n) gives chains i -> j -> ...; each chain is one object,
as large as its largest tensor (never more than the flow's cost).

Solver: successive shortest paths, primal-dual style:
- SPFA (Bellman-Ford with a queue) for distances from s in the residual graph;
- push as many unit paths as exist along edges with dist[u] + cost == dist[v]
  (all shortest), depth-first with a current-edge pointer per vertex;
- repeat until t is unreachable. Each round is O(E) SPFA + O(E) DFS in practice.

Reuse edges are pruned: all pairs would be O(n^2) edges on a chain (45k at n=300).
For each j only these predecessors i (last_i < first_j) get an edge:
- the `nearest` latest-ending ones: older predecessors are also open to the
  tensors that start earlier than j, so they matter less to j than to others;
- the `nearest` smallest ones at least as large as j (free reuse, best fit: a
  much larger object is better saved for a larger tensor) and the `nearest`
  largest smaller ones (the cheapest growth).
Any subset of edges still gives a valid plan; `nearest=None` keeps all of them.
NEAREST = 16, from `python -m benchmarks.engine.memory_bench` at n=300: ~65 ms against
~250-300 ms with every edge, totals within 0-7% of the every-edge ones (8: ~40 ms
but up to 17% larger on chains). The flow's cost is an estimate, so more edges
do not always give a smaller plan.
"""

from __future__ import annotations

import bisect
from collections import deque
from collections.abc import Sequence

from engine.memory.plan import ObjectPlan, object_plan
from engine.memory.records import TensorUsage

NEAREST = 16


def reuse_pairs(records: Sequence[TensorUsage], nearest: int | None) -> list[tuple[int, int]]:
    """(i, j) pairs with last_i < first_j that get a reuse edge."""
    n = len(records)
    by_last = sorted(range(n), key=lambda i: records[i].last)
    lasts = [records[i].last for i in by_last]
    ended: list[tuple[int, int]] = []  # (size, i) of tensors ended so far, sorted
    pairs: list[tuple[int, int]] = []
    done = 0
    for j in sorted(range(n), key=lambda j: records[j].first):
        r = records[j]
        p = bisect.bisect_left(lasts, r.first)  # by_last[:p] end before j starts
        if nearest is None:
            pairs += [(i, j) for i in by_last[:p]]
            continue
        for i in by_last[done:p]:
            bisect.insort(ended, (records[i].size, i))
        done = p
        k = bisect.bisect_left(ended, (r.size, -1))
        near = {i for _, i in ended[max(0, k - nearest) : k + nearest]}
        near.update(by_last[max(0, p - nearest) : p])
        pairs += [(i, j) for i in sorted(near)]
    return pairs


class _Network:
    """Residual graph in flat lists; edge e and e ^ 1 are each other's reverse."""

    def __init__(self, vertices: int) -> None:
        self.adj: list[list[int]] = [[] for _ in range(vertices)]
        self.to: list[int] = []
        self.cap: list[int] = []
        self.cost: list[int] = []

    def add(self, u: int, v: int, cost: int) -> int:
        e = len(self.to)
        self.adj[u].append(e)
        self.adj[v].append(e + 1)
        self.to += [v, u]
        self.cap += [1, 0]
        self.cost += [cost, -cost]
        return e

    def spfa(self, s: int) -> list[float]:
        dist = [float("inf")] * len(self.adj)
        dist[s] = 0
        queue, queued = deque([s]), [False] * len(self.adj)
        queued[s] = True
        to, cap, cost, adj = self.to, self.cap, self.cost, self.adj
        while queue:
            u = queue.popleft()
            queued[u] = False
            du = dist[u]
            for e in adj[u]:
                if cap[e] and du + cost[e] < dist[to[e]]:
                    v = to[e]
                    dist[v] = du + cost[e]
                    if not queued[v]:
                        queued[v] = True
                        queue.append(v)
        return dist

    def augment(self, s: int, t: int, dist: list[float]) -> int:
        """Push unit paths along shortest-path edges until none is left; returns the count."""
        to, cap, cost, adj = self.to, self.cap, self.cost, self.adj
        pointer = [0] * len(adj)
        on_path = [False] * len(adj)
        pushed = 0
        while True:
            path, stack = [], [s]  # path[k] = edge from stack[k] to stack[k + 1]
            on_path[s] = True
            while stack and stack[-1] != t:
                u = stack[-1]
                edges = adj[u]
                while pointer[u] < len(edges):
                    e = edges[pointer[u]]
                    v = to[e]
                    if cap[e] and not on_path[v] and dist[u] + cost[e] == dist[v]:
                        break
                    pointer[u] += 1
                if pointer[u] == len(edges):  # dead end: retreat
                    on_path[stack.pop()] = False
                    if path:
                        path.pop()
                        pointer[stack[-1]] += 1
                    continue
                path.append(edges[pointer[u]])
                stack.append(to[edges[pointer[u]]])
                on_path[stack[-1]] = True
            for v in stack:
                on_path[v] = False
            if not stack:
                return pushed
            for e in path:
                cap[e] -= 1
                cap[e ^ 1] += 1
            pushed += 1


def reuse_chains(records: Sequence[TensorUsage], nearest: int | None = NEAREST) -> dict[int, int]:
    """Solve the flow; j -> i (record indices) for every tensor j that reuses i's object."""
    n = len(records)
    s, t = 0, 1
    net = _Network(2 * n + 2)
    for i, r in enumerate(records):
        net.add(s, 2 + i, 0)
        net.add(s, 2 + n + i, r.size)
        net.add(2 + n + i, t, 0)
    reuse = {}
    for i, j in reuse_pairs(records, nearest):
        reuse[net.add(2 + i, 2 + n + j, max(0, records[j].size - records[i].size))] = (i, j)
    while (dist := net.spfa(s))[t] != float("inf") and net.augment(s, t, dist):
        pass
    return {j: i for e, (i, j) in reuse.items() if net.cap[e] == 0}


def mincostflow(records: Sequence[TensorUsage], nearest: int | None = NEAREST) -> ObjectPlan:
    """Min-cost-flow shared buffers; `nearest=None` keeps every reuse edge."""
    previous = reuse_chains(records, nearest)
    assignment = [0] * len(records)
    sizes: list[int] = []
    for j in sorted(range(len(records)), key=lambda j: records[j].first):  # i comes before j
        if j in previous:
            obj = assignment[j] = assignment[previous[j]]
            sizes[obj] = max(sizes[obj], records[j].size)
        else:
            assignment[j] = len(sizes)
            sizes.append(records[j].size)
    return object_plan("mincostflow", records, assignment, sizes)
