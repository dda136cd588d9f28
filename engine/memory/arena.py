"""arena: byte offsets into one buffer; a heuristic start, then an exact search.

The start (TFLite's GreedyBySizeOffsets, plus a first-fit run):
- sort tensors by size, largest first (ties: earlier first op);
- for each, list the already-placed tensors that overlap it in time, by offset;
- the gaps between them (each gap starting at an `alignment`-aligned offset) are
  candidate places; take the smallest gap that fits (best fit), else the aligned
  end of the last one;
- run again taking the lowest gap that fits (first fit) and keep the smaller arena.
O(n^2 log n): each tensor scans the placed ones.
Then, unless the start is at the aligned lower bound already, the exact search of
arena_search.py looks for a smaller plan (first one at the bound) within a node budget;
the start stays when it finds none, so the arena is never larger than the heuristic's.
`alignment` is the device's min_storage_buffer_offset_alignment (256 on most WebGPU
adapters, the spec's maximum).
"""

from __future__ import annotations

from collections.abc import Sequence

from engine.memory.arena_search import align_up, search
from engine.memory.plan import ArenaPlan
from engine.memory.records import TensorUsage, overlaps

DEFAULT_ALIGNMENT = 256


def _place(records: Sequence[TensorUsage], alignment: int, best_fit: bool) -> list[int]:
    offsets = [0] * len(records)
    placed: list[int] = []
    for i in sorted(range(len(records)), key=lambda i: (-records[i].size, records[i].first, i)):
        r = records[i]
        if r.size == 0:
            continue
        busy = sorted(
            (offsets[j], offsets[j] + records[j].size) for j in placed if overlaps(r, records[j])
        )
        chosen, chosen_gap, end = None, None, 0
        for lo, hi in busy:
            start = align_up(end, alignment)
            gap = lo - start
            if gap >= r.size and (chosen_gap is None or gap < chosen_gap):
                chosen, chosen_gap = start, gap
                if not best_fit:
                    break
            end = max(end, hi)
        offsets[i] = align_up(end, alignment) if chosen is None else chosen
        placed.append(i)
    return offsets


def arena(
    records: Sequence[TensorUsage],
    alignment: int = DEFAULT_ALIGNMENT,
    budget: int | None = None,
) -> ArenaPlan:
    """Offsets into one arena buffer, each a multiple of `alignment`: the heuristic start,
    improved by the exact search (`budget` nodes per decision, arena_search.BUDGET by
    default; 0: the heuristic alone)."""
    if alignment < 1:
        raise ValueError(f"alignment must be >= 1, got {alignment}")
    best: tuple[int, list[int]] | None = None
    for best_fit in (True, False):
        offsets = _place(records, alignment, best_fit)
        size = max((o + r.size for o, r in zip(offsets, records, strict=True)), default=0)
        if best is None or size < best[0]:
            best = (size, offsets)
    size, offsets = best
    ids = {r.tensor: o for r, o in zip(records, offsets, strict=True)}
    if budget != 0:
        size, found, _ = search(records, alignment, size, budget)
        ids = found or ids
    return ArenaPlan("arena", ids, size, alignment)
