"""Hypothesis strategies for random schedules, and brute-force optima for tiny ones."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from hypothesis import strategies as st

from engine.memory import TensorUsage
from engine.memory.records import overlaps
from engine.model.ir import Graph, Op, Tensor


@st.composite
def random_graphs(draw, max_ops: int = 24) -> Graph:
    """A random DAG in execution order: each op reads earlier tensors (graph inputs,
    constants or op outputs, some inputs left out as -1) and writes 1-2 new tensors;
    some op outputs are graph outputs."""
    dims = st.integers(1, 6)
    shapes = st.lists(dims, min_size=0, max_size=4).map(tuple)
    tensors = [Tensor(f"in{k}", draw(shapes), "float32") for k in range(draw(st.integers(1, 2)))]
    inputs = list(range(len(tensors)))
    tensors.append(Tensor("weights", (4,), "float32", np.zeros(4, np.float32)))
    readable = list(range(len(tensors)))
    ops = []
    for k in range(draw(st.integers(1, max_ops))):
        reads = draw(st.lists(st.sampled_from(readable), min_size=1, max_size=3, unique=True))
        if draw(st.booleans()):
            reads.append(-1)
        writes = []
        for _ in range(draw(st.integers(1, 2))):
            writes.append(len(tensors))
            tensors.append(Tensor(f"op{k}_out{len(writes)}", draw(shapes), "float32"))
        readable += writes
        ops.append(Op("ADD", tuple(reads), tuple(writes)))
    produced = [t for op in ops for t in op.outputs]
    outputs = draw(st.lists(st.sampled_from(produced), min_size=1, max_size=3, unique=True))
    return Graph(tensors, ops, inputs, outputs)


@st.composite
def random_records(draw, max_tensors: int = 30, extents: bool | None = None) -> list[TensorUsage]:
    """Random lifetimes; with extents, texture-shaped sizes (one texel size per list),
    else arbitrary byte sizes."""
    with_extent = draw(st.booleans()) if extents is None else extents
    texel = draw(st.sampled_from([8, 16]))
    records = []
    for k in range(draw(st.integers(0, max_tensors))):
        first = draw(st.integers(0, 20))
        last = first + draw(st.integers(0, 6))
        if with_extent:
            e = (draw(st.integers(1, 8)), draw(st.integers(1, 8)), draw(st.integers(1, 4)))
            records.append(TensorUsage(k, e[0] * e[1] * e[2] * texel, first, last, e))
        else:
            records.append(TensorUsage(k, draw(st.integers(1, 1000)), first, last))
    return records


def optimal_objects(records: Sequence[TensorUsage]) -> int:
    """Smallest total of any object assignment (exhaustive; fine up to ~9 tensors).

    Tensors in order of first use join an existing object with no overlapping
    tensor, or open a new one; cost = sum of each object's largest tensor."""
    order = sorted(records, key=lambda r: r.first)
    best = sum(r.size for r in records)

    def search(k: int, groups: list[list[TensorUsage]], cost: int) -> None:
        nonlocal best
        if cost >= best:
            return
        if k == len(order):
            best = cost
            return
        r = order[k]
        for g in groups:
            if not any(overlaps(r, x) for x in g):
                top = max(x.size for x in g)
                g.append(r)
                search(k + 1, groups, cost + max(0, r.size - top))
                g.pop()
        groups.append([r])
        search(k + 1, groups, cost + r.size)
        groups.pop()

    search(0, [], 0)
    return best


def optimal_flow_cost(records: Sequence[TensorUsage]) -> int:
    """Min of the flow model's cost (new object: size; i -> j: max(0, s_j - s_i)),
    each i handing its object to at most one j; exhaustive."""
    order = sorted(range(len(records)), key=lambda j: records[j].first)
    best = None

    def search(k: int, used: set[int], cost: int) -> None:
        nonlocal best
        if best is not None and cost >= best:
            return
        if k == len(order):
            best = cost
            return
        j = order[k]
        rj = records[j]
        search(k + 1, used, cost + rj.size)
        for i, ri in enumerate(records):
            if i not in used and ri.last < rj.first:
                used.add(i)
                search(k + 1, used, cost + max(0, rj.size - ri.size))
                used.remove(i)

    search(0, set(), 0)
    return best or 0


@st.composite
def tiled_records(draw, max_ops: int = 30, max_height: int = 32) -> tuple[list[TensorUsage], int]:
    """Records whose optimal arena is known by construction: a strip of `height` units
    (units of `alignment` bytes) fully tiled by the live tensors at every op, as an
    inference graph changes it: each op ends a run of up to 3 tensors adjacent in the
    strip and writes one tensor over their union, or ends one and writes two that split
    it. Every op has `height` units live, so the lower bound is height * alignment and
    the tiling itself is an arena of that size. Returns (records, alignment)."""
    alignment = draw(st.sampled_from([1, 4, 256]))
    height = draw(st.integers(1, max_height))
    live = [(0, height, 0)]  # (low, high, first op) of each tensor, in strip order
    records: list[TensorUsage] = []

    def end(x, op):
        records.append(TensorUsage(len(records), (x[1] - x[0]) * alignment, x[2], op - 1))

    ops = draw(st.integers(1, max_ops))
    for op in range(1, ops):
        k = draw(st.integers(0, len(live) - 1))
        lo, hi, _ = live[k]
        if hi - lo > 1 and draw(st.booleans()):
            cut = draw(st.integers(lo + 1, hi - 1))
            end(live[k], op)
            live[k : k + 1] = [(lo, cut, op), (cut, hi, op)]
        else:
            j = min(len(live) - 1, k + draw(st.integers(0, 2)))
            for x in live[k : j + 1]:
                end(x, op)
            live[k : j + 1] = [(lo, live[j][1], op)]
    for x in live:
        end(x, ops)
    return records, alignment


def optimal_arena(records: Sequence[TensorUsage], alignment: int) -> int:
    """Smallest aligned arena (exhaustive; fine up to ~7 tensors), by another route than
    arena_search.py: every order of the tensors, each dropped onto the highest aligned top
    of those before it that are alive with it (every plan can be lowered into one such)."""
    from itertools import permutations

    items = [r for r in records if r.size]
    best = sum(-(-r.size // alignment) * alignment for r in items)
    for order in permutations(items):
        tops: list[tuple[TensorUsage, int]] = []
        size = 0
        for r in order:
            below = [-(-t // alignment) * alignment for q, t in tops if overlaps(q, r)]
            top = max(below, default=0) + r.size
            tops.append((r, top))
            size = max(size, top)
        best = min(best, size)
    return best
