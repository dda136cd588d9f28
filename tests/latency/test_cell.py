"""Cells: validation, pruning and the NAS-Bench-101 hash on hand-made cells; the space."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest

from engine.latency import space
from engine.latency.cell import (
    CONV1X1,
    CONV3X3,
    INPUT,
    MAXPOOL3X3,
    OUTPUT,
    Cell,
    CellError,
    graph_hash,
)

IN, OUT, C3, C1, MP = INPUT, OUTPUT, CONV3X3, CONV1X1, MAXPOOL3X3


def test_invalid_cells_are_errors():
    with pytest.raises(CellError, match="upper triangular"):
        Cell.make([[0, 1], [1, 0]], [IN, OUT])
    with pytest.raises(CellError, match="ops"):
        Cell.make([[0, 1], [0, 0]], [IN, C3, OUT])
    with pytest.raises(CellError, match="first op"):
        Cell.make([[0, 1, 0], [0, 0, 1], [0, 0, 0]], [C3, IN, OUT])
    with pytest.raises(CellError, match="unknown ops"):
        Cell.make([[0, 1, 0], [0, 0, 1], [0, 0, 0]], [IN, "conv5x5", OUT])


def test_pruning_drops_vertices_off_every_path():
    # vertex 2 has no input (island), vertex 3 leads nowhere (dangling)
    cell = Cell.make(
        [[0, 1, 0, 1, 0],
         [0, 0, 0, 0, 1],
         [0, 0, 0, 0, 1],
         [0, 0, 0, 0, 0],
         [0, 0, 0, 0, 0]],
        [IN, C3, C1, MP, OUT],
    )  # fmt: skip
    p = cell.pruned()
    assert p.matrix == ((0, 1, 0), (0, 0, 1), (0, 0, 0))
    assert p.ops == (IN, C3, OUT)
    assert cell.hash() == p.hash()


def test_pruning_keeps_a_full_dag_and_rejects_a_disconnected_one():
    diamond = Cell.make([[0, 1, 1, 0], [0, 0, 0, 1], [0, 0, 0, 1], [0, 0, 0, 0]], [IN, C3, MP, OUT])
    assert diamond.pruned() == diamond
    cut = Cell.make([[0, 1, 0, 0], [0, 0, 0, 0], [0, 0, 0, 1], [0, 0, 0, 0]], [IN, C3, C1, OUT])
    assert cut.pruned() is None and not cut.is_valid()
    with pytest.raises(CellError):
        cut.hash()


def test_limits_apply_after_pruning():
    # 8 vertices on a chain 0-1-2-4-5-6-7 plus 2 -> 3, where vertex 3 leads nowhere:
    # valid once pruned to 7 vertices
    m = np.zeros((8, 8), int)
    for a, b in ((0, 1), (1, 2), (2, 4), (4, 5), (5, 6), (6, 7), (2, 3)):
        m[a, b] = 1
    cell = Cell.make(m, [IN, C3, C3, C1, C3, C3, MP, OUT])
    assert cell.pruned().vertices == 7 and cell.pruned().edges == 6 and cell.is_valid()
    dense = np.triu(np.ones((7, 7), int), 1)  # 21 edges
    assert not Cell.make(dense, [IN, C3, C3, C3, C3, C3, OUT]).is_valid()


def _permute(matrix, labels, perm):
    """Vertex v becomes perm[v] (any permutation, also non-topological)."""
    n = len(labels)
    m = np.zeros((n, n), int)
    for a, b in itertools.product(range(n), repeat=2):
        m[perm[a], perm[b]] = matrix[a][b]
    new = [0] * n
    for v in range(n):
        new[perm[v]] = labels[v]
    return m.tolist(), new


def test_hash_is_invariant_under_vertex_permutation():
    rng = np.random.default_rng(7)
    for _ in range(50):
        cell = space.random_cell(rng)
        labels = cell.labels()
        perm = rng.permutation(cell.vertices).tolist()
        assert graph_hash(*_permute(cell.matrix, labels, perm)) == cell.hash()


def test_hash_separates_non_isomorphic_cells():
    chain = [[0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1], [0, 0, 0, 0]]
    a = Cell.make(chain, [IN, C3, C1, OUT])
    b = Cell.make(chain, [IN, C1, C3, OUT])  # same ops, other order
    skip = [[0, 1, 0, 1], [0, 0, 1, 0], [0, 0, 0, 1], [0, 0, 0, 0]]
    c = Cell.make(skip, [IN, C3, C1, OUT])
    d = Cell.make(skip, [IN, C1, C3, OUT])  # the skip edge bypasses the other op
    assert len({a.hash(), b.hash(), c.hash(), d.hash()}) == 4
    # a diamond's two branches may swap
    x = Cell.make([[0, 1, 1, 0], [0, 0, 0, 1], [0, 0, 0, 1], [0, 0, 0, 0]], [IN, C3, MP, OUT])
    y = Cell.make([[0, 1, 1, 0], [0, 0, 0, 1], [0, 0, 0, 1], [0, 0, 0, 0]], [IN, MP, C3, OUT])
    assert x.hash() == y.hash()


def test_sampler_is_seeded_and_distinct():
    a = space.sample_cells(20, seed=3)
    assert [c.hash() for c in a] == [c.hash() for c in space.sample_cells(20, seed=3)]
    assert len({c.hash() for c in a}) == 20 and all(c.is_valid() for c in a)
    assert Cell.from_dict(json.loads(json.dumps(a[0].to_dict()))) == a[0]


def test_enumeration_resumes_to_the_same_space(tmp_path, monkeypatch):
    whole = tmp_path / "whole.jsonl.gz"
    n = space.enumerate_space(whole, max_vertices=5, progress=False)
    # up to 5 vertices: 1 + 6 + 84 + 2441 (the per-size counts of the full space)
    assert n == 2532
    cut = tmp_path / "cut.jsonl.gz"
    monkeypatch.setattr(space, "BATCH_MASKS", 50)
    calls = {"n": 0}
    real = space.graph_hash

    def dying(*args):
        calls["n"] += 1
        if calls["n"] == 3000:
            raise KeyboardInterrupt
        return real(*args)

    monkeypatch.setattr(space, "graph_hash", dying)
    with pytest.raises(KeyboardInterrupt):
        space.enumerate_space(cut, max_vertices=5, progress=False)
    monkeypatch.setattr(space, "graph_hash", real)
    assert space.enumerate_space(cut, max_vertices=5, progress=False) == n
    key = lambda rows: sorted(r["hash"] for r in rows)  # noqa: E731
    assert key(space.load_space(cut)) == key(space.load_space(whole))


@pytest.mark.slow
def test_full_space_has_423624_cells(tmp_path):
    """NAS-Bench-101's count (generate_graphs.py). 189 s on this 2-core machine at load 3-5:
    the slow tier: `make test-all` runs it, CI leaves it out."""
    assert space.enumerate_space(tmp_path / "space.jsonl.gz", progress=False) == 423_624
