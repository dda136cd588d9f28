"""NAS-Bench-101 cells: a labelled DAG, its validation, pruning and isomorphism-invariant hash.

The rules are NAS-Bench-101's (google-research/nasbench, model_spec.py, graph_util.py):
- a cell is an upper-triangular 0/1 adjacency matrix of V vertices and V labels:
  vertex 0 is "input", vertex V-1 is "output", the others one of OPS;
- pruning drops every vertex that is not on some input -> output path (the remaining
  vertices keep their order); when fewer than 2 remain, input does not reach output
  and the cell is invalid;
- a valid cell has, after pruning, at most MAX_VERTICES vertices and MAX_EDGES edges;
- the hash is the Weisfeiler-Lehman-style MD5 of graph_util.hash_module over the pruned
  matrix with labels input -1, output -2, OPS index otherwise: each vertex starts as
  md5(str((out-degree, in-degree, label))), then V rounds of md5 over its sorted in-
  neighbour hashes, "|", sorted out-neighbour hashes, "|", its own hash; the cell hash is
  md5(str(sorted(vertex hashes))). The same strings as NAS-Bench-101, so our hashes are
  its module hashes. Up to 7 vertices and 9 edges it has no collisions (NAS-Bench-101
  checked every pair exhaustively): 423,624 unique cells.

    cell = Cell.make([[0, 1, 1], [0, 0, 1], [0, 0, 0]], ["input", CONV3X3, "output"])
    cell.hash(); cell.pruned(); Cell.from_dict(cell.to_dict())
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

INPUT, OUTPUT = "input", "output"
CONV3X3, CONV1X1, MAXPOOL3X3 = "conv3x3-bn-relu", "conv1x1-bn-relu", "maxpool3x3"
OPS = (CONV3X3, CONV1X1, MAXPOOL3X3)  # NAS-Bench-101's order: hash labels 0, 1, 2
MAX_VERTICES = 7
MAX_EDGES = 9


class CellError(ValueError):
    """A matrix/ops pair that is not a NAS-Bench-101 cell."""


@dataclass(frozen=True)
class Cell:
    matrix: tuple[tuple[int, ...], ...]
    ops: tuple[str, ...]

    @classmethod
    def make(cls, matrix: Sequence[Sequence[int]], ops: Sequence[str]) -> Cell:
        """A cell from any nested sequence (lists, numpy arrays); checks the shape rules."""
        return cls(tuple(tuple(int(x) for x in row) for row in matrix), tuple(ops))

    def __post_init__(self) -> None:
        n = len(self.matrix)
        if n < 2 or any(len(row) != n for row in self.matrix):
            raise CellError(f"matrix must be square with >= 2 vertices, got {self.matrix}")
        if len(self.ops) != n:
            raise CellError(f"{len(self.ops)} ops for {n} vertices")
        for i, row in enumerate(self.matrix):
            for j, x in enumerate(row):
                if x not in (0, 1) or (x and j <= i):
                    raise CellError(f"matrix must be 0/1 and upper triangular (at {i},{j})")
        if self.ops[0] != INPUT or self.ops[-1] != OUTPUT:
            raise CellError(f"first op must be {INPUT!r} and last {OUTPUT!r}: {self.ops}")
        bad = [op for op in self.ops[1:-1] if op not in OPS]
        if bad:
            raise CellError(f"unknown ops {bad}; expected one of {OPS}")

    @property
    def vertices(self) -> int:
        return len(self.matrix)

    @property
    def edges(self) -> int:
        return sum(map(sum, self.matrix))

    def pruned(self) -> Cell | None:
        """The cell without vertices off every input -> output path; None: not connected."""
        n = self.vertices
        keep = _reach(self.matrix, 0, forward=True) & _reach(self.matrix, n - 1, forward=False)
        if len(keep) < 2:
            return None
        order = sorted(keep)
        return Cell(
            tuple(tuple(self.matrix[i][j] for j in order) for i in order),
            tuple(self.ops[i] for i in order),
        )

    def is_valid(self) -> bool:
        """Connected, and within MAX_VERTICES / MAX_EDGES once pruned."""
        p = self.pruned()
        return p is not None and p.vertices <= MAX_VERTICES and p.edges <= MAX_EDGES

    def hash(self) -> str:
        """NAS-Bench-101's module hash of the pruned cell (CellError when not connected)."""
        p = self.pruned()
        if p is None:
            raise CellError(f"input does not reach output: {self.matrix}")
        return graph_hash(p.matrix, p.labels())

    def labels(self) -> list[int]:
        """Hash labels: input -1, output -2, an op its index in OPS."""
        return [-1] + [OPS.index(op) for op in self.ops[1:-1]] + [-2]

    def to_dict(self) -> dict:
        return {"matrix": [list(r) for r in self.matrix], "ops": list(self.ops)}

    @classmethod
    def from_dict(cls, d: dict) -> Cell:
        return cls.make(d["matrix"], d["ops"])


def _reach(matrix: tuple[tuple[int, ...], ...], start: int, forward: bool) -> set[int]:
    """Vertices reachable from `start` along edges (forward) or against them."""
    n = len(matrix)
    seen, todo = {start}, [start]
    while todo:
        v = todo.pop()
        nxt = (w for w in range(n) if (matrix[v][w] if forward else matrix[w][v]))
        for w in nxt:
            if w not in seen:
                seen.add(w)
                todo.append(w)
    return seen


def graph_hash(matrix: Sequence[Sequence[int]], labels: Sequence[int]) -> str:
    """NAS-Bench-101's graph_util.hash_module: the same strings, so the same MD5."""
    n = len(matrix)
    ins = [sum(matrix[w][v] for w in range(n)) for v in range(n)]
    outs = [sum(matrix[v]) for v in range(n)]
    preds = [[w for w in range(n) if matrix[w][v]] for v in range(n)]
    succs = [[w for w in range(n) if matrix[v][w]] for v in range(n)]
    h = [_md5(str((outs[v], ins[v], labels[v]))) for v in range(n)]
    for _ in range(n):  # NAS-Bench-101 repeats V times (>= the diameter)
        h = [
            _md5(
                "".join(sorted(h[w] for w in preds[v]))
                + "|"
                + "".join(sorted(h[w] for w in succs[v]))
                + "|"
                + h[v]
            )
            for v in range(n)
        ]
    return _md5(str(sorted(h)))


def _md5(text: str) -> str:
    return hashlib.md5(text.encode("utf-8")).hexdigest()
