"""Arena offsets by exact search: is there a plan of at most H bytes? (arena.py's exact mode)

The problem (dynamic storage allocation): tensor i needs bytes [o_i, o_i + size_i),
o_i a multiple of the alignment A, over ops [first_i, last_i]; tensors alive at once
may not share a byte; minimise the arena, max(o_i + size_i). NP-hard in general; on
inference graphs (chains, skips, few tensors alive at once) a depth-first search finds
plans at the lower bound in about one node per tensor.

The decision (`_Decision.run(H)`), a search in time order:
- tensors by first op (ties: larger first); tensor i only has to avoid the tensors
  placed before it that are still alive at its first op (later ones avoid it), so
  its choices are the aligned offsets in the gaps they leave below H;
- pass 1 tries two offsets per gap, its bottom and its highest aligned start (the
  two ends; both ends of the arena serve a chain as a ping-pong pair), smallest
  fitting gap first, lower offset first;
- pass 2, when pass 1 ends without a plan and nodes remain, tries every aligned
  offset, so the search is complete: with nodes enough it answers exactly;
- a node is one offset tried; `budget` caps them over both passes.

`search(records, A, start)`: the best plan below the heuristic's `start` bytes:
- H = the aligned lower bound first (no plan is smaller: when it fits, it is optimal);
- then bisect H between the bound and the best plan found, one decision per step;
- every step has its own node budget; node counts, never clocks, so the same records
  give the same plan on every machine.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from engine.memory.records import TensorUsage

# Nodes per decision search, and decision searches after the first one (at the bound).
# At alignment 256 the 14 MediaPipe models place a plan at the bound in <= 96 nodes
# (fp32 and fp16, about one per tensor), as do MobileNetV1/V2 and DeepLabV3 at output
# stride 16 (benchmarks/engine/memory_graphs.py); DeepLabV3 at stride 8, whose aligned bound
# is out of reach, ends at 1.0001x after 4309 (docs/memory.md). A node costs 5-15 us of
# CPython, so the worst case (every decision runs out) is ~0.3 s.
BUDGET = 4000
BISECTIONS = 5


def align_up(x: int, alignment: int) -> int:
    return -(-x // alignment) * alignment


def aligned_lower_bound(records: Sequence[TensorUsage], alignment: int) -> int:
    """Max over op steps of the live tensors' bytes, each but the topmost rounded up to the
    alignment (the next aligned offset above it): no aligned arena is smaller. Equals
    lower_bound() at alignment 1."""
    live: list[TensorUsage] = []
    best = 0
    for r in sorted((r for r in records if r.size), key=lambda r: r.first):
        live = [q for q in live if q.last >= r.first] + [r]
        padded = [align_up(q.size, alignment) for q in live]
        slack = max(p - q.size for p, q in zip(padded, live, strict=True))
        best = max(best, sum(padded) - slack)
    return best


class _Decision:
    """One decision search; items in time order, `before[k]`: earlier items alive with k."""

    def __init__(self, records: Sequence[TensorUsage], alignment: int):
        key = lambda r: (r.first, -r.size, r.tensor)  # noqa: E731
        self.items = sorted((r for r in records if r.size), key=key)
        self.a = alignment
        self.before = [
            [j for j in range(k) if self.items[j].last >= r.first]
            for k, r in enumerate(self.items)
        ]  # fmt: skip
        self.offsets = [0] * len(self.items)

    def gaps(self, k: int, height: int) -> list[tuple[int, int]]:
        """Free [start, end) byte ranges below `height` at item k's first op."""
        busy = sorted(
            (self.offsets[j], self.offsets[j] + self.items[j].size) for j in self.before[k]
        )
        out, end = [], 0
        for lo, hi in busy:
            if lo > end:
                out.append((end, lo))
            end = max(end, hi)
        if height > end:
            out.append((end, height))
        return out

    def choices(self, k: int, height: int, every: bool) -> Iterator[int]:
        size, a = self.items[k].size, self.a
        spans = []
        for lo, hi in self.gaps(k, height):
            bottom, top = align_up(lo, a), (hi - size) // a * a
            if bottom <= top:
                spans.append((hi - lo, bottom, top))
        spans.sort()
        for _, bottom, top in spans:  # the two ends of every gap, smallest gap first
            yield bottom
            if top != bottom:
                yield top
        if every:
            for _, bottom, top in spans:
                yield from range(bottom + a, top, a)

    def run(self, height: int, budget: int) -> tuple[list[int] | None, int]:
        """Byte offsets (in item order) of a plan within `height` bytes, and the nodes
        used; None when there is none or the budget ran out first."""
        if not self.items:
            return [], 0
        nodes = 0
        for every in (False, True):
            stack = [self.choices(0, height, every)]
            while stack:
                k = len(stack) - 1
                offset = next(stack[-1], None)
                if offset is None:
                    stack.pop()
                    continue
                nodes += 1
                if nodes > budget:
                    return None, budget
                self.offsets[k] = offset
                if k + 1 == len(self.items):
                    return list(self.offsets), nodes
                stack.append(self.choices(k + 1, height, every))
        return None, nodes


def search(
    records: Sequence[TensorUsage],
    alignment: int,
    start: int,
    budget: int | None = None,
    bisections: int | None = None,
) -> tuple[int, dict[int, int] | None, int]:
    """(arena bytes, offsets by tensor id, nodes) of the best plan found below `start`
    bytes; offsets None when no plan below `start` was found. `budget`: nodes per
    decision search (default BUDGET), `bisections` after the first (default BISECTIONS)."""
    budget = BUDGET if budget is None else budget
    bisections = BISECTIONS if bisections is None else bisections
    low = aligned_lower_bound(records, alignment)  # no plan is smaller
    if start <= low:
        return start, None, 0
    decision = _Decision(records, alignment)
    best, found, nodes = start, None, 0
    height = low
    for _ in range(1 + bisections):
        if best <= low or height >= best:
            break
        offsets, used = decision.run(height, budget)
        nodes += used
        if offsets is None:
            low = height + 1  # none found (maybe none exists): look higher
        else:
            best = max(o + r.size for o, r in zip(offsets, decision.items, strict=True))
            found = {r.tensor: o for r, o in zip(decision.items, offsets, strict=True)}
        height = (low + best - 1) // 2
    if found is None:
        return start, None, nodes
    return best, {r.tensor: found.get(r.tensor, 0) for r in records}, nodes
