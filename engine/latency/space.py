"""The NAS-Bench-101 space: a seedable sampler and a resumable enumerator of every cell.

- `random_cell(rng)`: NAS-Bench-101's random spec (a random 7x7 upper-triangular
  matrix, random ops, kept when valid), pruned;
- `sample_cells(n, seed, space)`: n distinct cells, uniform over the enumerated space
  when `space` (a list from `load_space`) is given, else by `random_cell` (which
  favours large cells, as NAS-Bench-101's own random search does);
- `enumerate_space(path)`: generate_graphs.py's loop (for V = 2..7, every bit mask of
  the upper triangle, kept when every vertex is on an input -> output path and the
  edges are <= 9; every labelling of the interior vertices; first cell of each hash
  kept) into a gzipped JSON-lines file, one {"hash", "matrix", "ops"} per line.
  Resumable: after each batch a complete gzip member is appended and a state file
  (next vertex count and mask, cells and bytes written) is saved; a restart truncates
  the file to the last state and goes on. One tqdm bar over the bit masks.
"""

from __future__ import annotations

import gzip
import itertools
import json
import os
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from engine.latency.cell import INPUT, MAX_EDGES, MAX_VERTICES, OPS, OUTPUT, Cell, graph_hash

SPACE_SIZE = 423_624  # NAS-Bench-101: unique cells up to 7 vertices, 9 edges, 3 ops
BATCH_MASKS = 20_000  # bit masks between checkpoints (a few seconds of work)


def random_cell(rng: np.random.Generator, vertices: int = MAX_VERTICES) -> Cell:
    """A valid cell, pruned: NAS-Bench-101's rejection sampler over full-size specs."""
    while True:
        matrix = np.triu(rng.integers(0, 2, (vertices, vertices)), 1)
        ops = [INPUT] + [OPS[i] for i in rng.integers(0, len(OPS), vertices - 2)] + [OUTPUT]
        cell = Cell.make(matrix, ops)
        if cell.is_valid():
            return cell.pruned()


def sample_cells(n: int, seed: int = 0, space: list[dict] | None = None) -> list[Cell]:
    """`n` distinct cells (by hash), reproducible from `seed`; see the module docstring."""
    rng = np.random.default_rng(seed)
    if space is not None:
        if n > len(space):
            raise ValueError(f"asked for {n} cells, the space has {len(space)}")
        picks = rng.choice(len(space), size=n, replace=False)
        return [Cell.from_dict(space[i]) for i in picks]
    cells: dict[str, Cell] = {}
    while len(cells) < n:
        cell = random_cell(rng)
        cells.setdefault(cell.hash(), cell)
    return list(cells.values())


def load_space(path: str | os.PathLike) -> list[dict]:
    """The cells `enumerate_space` wrote, as dicts with "hash", "matrix", "ops"."""
    with gzip.open(path, "rt") as f:
        return [json.loads(line) for line in f]


def full_dags(vertices: int, start: int = 0, max_edges: int = MAX_EDGES) -> Iterator[tuple]:
    """(mask, matrix) for masks >= start whose DAG has every vertex on an input -> output
    path and at most `max_edges` edges. Bit x + y(y-1)/2 is edge x -> y (generate_graphs.py's
    order), so the masks of V vertices are those of V-1 plus the new last column."""
    pairs = [(x, y) for y in range(vertices) for x in range(y)]  # bit index order
    for mask in range(start, 1 << len(pairs)):
        if mask.bit_count() > max_edges:
            continue
        rows, cols = [0] * vertices, [0] * vertices
        for bit, (x, y) in enumerate(pairs):
            if mask >> bit & 1:
                rows[x] += 1
                cols[y] += 1
        # Full DAG: only the output has no out-edge and only the input no in-edge.
        if all(rows[:-1]) and all(cols[1:]):
            matrix = [[0] * vertices for _ in range(vertices)]
            for bit, (x, y) in enumerate(pairs):
                if mask >> bit & 1:
                    matrix[x][y] = 1
            yield mask, matrix


def enumerate_space(
    path: str | os.PathLike,
    max_vertices: int = MAX_VERTICES,
    max_edges: int = MAX_EDGES,
    progress: bool = True,
) -> int:
    """Write every unique cell to `path` (gzipped JSON lines), resuming a partial run;
    returns the number of unique cells."""
    from tqdm import tqdm

    path = Path(path)
    state_path = path.with_name(path.name + ".state.json")
    state = {"vertices": 2, "mask": 0, "count": 0, "bytes": 0, "done": False}
    seen: set[str] = set()
    if state_path.exists() and path.exists():
        state = json.loads(state_path.read_text())
        with open(path, "r+b") as f:  # drop a batch cut off mid-write
            f.truncate(state["bytes"])
        seen = {row["hash"] for row in load_space(path)}
        assert len(seen) == state["count"], f"{path}: {len(seen)} cells, state says {state}"
    else:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"")
    if state["done"]:
        return state["count"]
    totals = {v: 1 << (v * (v - 1) // 2) for v in range(2, max_vertices + 1)}
    done = sum(t for v, t in totals.items() if v < state["vertices"]) + state["mask"]
    bar = tqdm(total=sum(totals.values()), initial=done, unit="mask", disable=not progress)
    lines: list[str] = []

    def checkpoint(vertices: int, mask: int) -> None:
        if lines:
            with gzip.open(path, "at") as f:
                f.write("".join(lines))
            lines.clear()
        state.update(vertices=vertices, mask=mask, count=len(seen), bytes=path.stat().st_size)
        tmp = state_path.with_suffix(".tmp")
        tmp.write_text(json.dumps(state))
        tmp.replace(state_path)
        bar.set_postfix(cells=len(seen), vertices=vertices)

    for vertices in range(state["vertices"], max_vertices + 1):
        start = state["mask"] if vertices == state["vertices"] else 0
        last = start
        for mask, matrix in full_dags(vertices, start, max_edges):
            for labels in itertools.product(range(len(OPS)), repeat=vertices - 2):
                h = graph_hash(matrix, [-1, *labels, -2])
                if h not in seen:
                    seen.add(h)
                    ops = [INPUT, *(OPS[i] for i in labels), OUTPUT]
                    lines.append(json.dumps({"hash": h, "matrix": matrix, "ops": ops}) + "\n")
            if mask - last >= BATCH_MASKS:
                bar.update(mask + 1 - last)
                last = mask + 1
                checkpoint(vertices, mask + 1)
        bar.update(totals[vertices] - last)
        checkpoint(vertices + 1, 0)
    state["done"] = True
    checkpoint(max_vertices + 1, 0)
    bar.close()
    return len(seen)


def sample_small(n: int, seed: int, space: list[dict], max_vertices: int = 5,
                 exclude: set[str] = frozenset()) -> list[Cell]:  # fmt: skip
    """`n` distinct cells of at most `max_vertices` vertices, uniform among those of the
    space not in `exclude` (hashes): extra small cells for the held-out-architecture test
    (a uniform sample of the space has ~0.6% of them: 2,532 of 423,624 have <= 5)."""
    pool = [r for r in space if len(r["ops"]) <= max_vertices and r["hash"] not in exclude]
    rng = np.random.default_rng(seed + 1)
    picks = rng.choice(len(pool), size=min(n, len(pool)), replace=False)
    return [Cell.from_dict(pool[i]) for i in picks]
