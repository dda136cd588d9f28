"""NEG, RSQRT, SQUARED_DIFFERENCE, GELU, BATCH_MATMUL and the reducers MEAN / SUM /
REDUCE_PROD over any axes (what a ViT needs) vs LiteRT."""

from __future__ import annotations

import numpy as np
import pytest

from tests.helpers.single_op import compare_with_litert, random_feeds, single_op_graph

pytest.importorskip("ai_edge_litert")


@pytest.mark.parametrize("shape", [(1, 64, 1), (2, 5, 7, 3), (9,)], ids=str)
def test_neg(shape):
    g = single_op_graph("NEG", [shape])
    compare_with_litert(g, random_feeds(g, np.random.default_rng(0), scale=5.0), tol=0.0)


@pytest.mark.parametrize("shape", [(1, 64, 1), (3, 17)], ids=str)
def test_rsqrt(shape):
    g = single_op_graph("RSQRT", [shape])
    rng = np.random.default_rng(1)
    feeds = {"input0": rng.uniform(1e-6, 50.0, shape).astype(np.float32)}
    compare_with_litert(g, feeds)


@pytest.mark.parametrize(
    "shapes",
    [((1, 64, 32), (1, 64, 1)), ((2, 3, 4, 5), (2, 3, 4, 5)), ((1, 4, 6), (6,)), ((5,), ())],
    ids=str,
)
def test_squared_difference(shapes):
    g = single_op_graph("SQUARED_DIFFERENCE", list(shapes))
    compare_with_litert(g, random_feeds(g, np.random.default_rng(2), scale=3.0))


def test_squared_difference_constant():
    c = np.asarray(np.random.default_rng(3).standard_normal((1, 1, 8)), np.float32)
    g = single_op_graph("SQUARED_DIFFERENCE", [(1, 5, 8), c])
    compare_with_litert(g, random_feeds(g, np.random.default_rng(4)))


@pytest.mark.parametrize("approximate", [False, True])
@pytest.mark.parametrize("shape", [(1, 64, 64), (2, 3, 4, 5)], ids=str)
def test_gelu(shape, approximate):
    g = single_op_graph("GELU", [shape], {"approximate": approximate})
    feeds = random_feeds(g, np.random.default_rng(5), scale=6.0)
    feeds["input0"].reshape(-1)[:6] = [0.0, -0.0, 9.0, -9.0, 30.0, -30.0]
    compare_with_litert(g, feeds)


MATMUL_CASES = [
    # (x shape, y shape or constant, adj_x, adj_y)
    ((1, 2, 64, 16), (1, 2, 16, 64), False, False),  # attention scores (ViT)
    ((1, 2, 64, 64), (1, 2, 64, 16), False, False),  # attention-weighted values
    ((3, 5, 7), (3, 7, 6), False, False),
    ((2, 1, 5, 7), (1, 3, 7, 2), False, False),  # both batch axes broadcast
    ((4, 9), (9, 3), False, False),  # rank 2
    ((2, 7, 5), (2, 7, 6), True, False),
    ((2, 5, 7), (2, 6, 7), False, True),
    ((2, 7, 5), (2, 6, 7), True, True),
    ((1, 6, 10), "const", False, False),
]


@pytest.mark.parametrize("case", MATMUL_CASES, ids=lambda c: f"{c[0]}x{c[1]}-{c[2]:d}{c[3]:d}")
def test_batch_matmul(case):
    x, y, adj_x, adj_y = case
    rng = np.random.default_rng(6)
    if y == "const":
        y = np.asarray(rng.standard_normal((10, 4)), np.float32)
    g = single_op_graph("BATCH_MATMUL", [x, y], {"adj_x": adj_x, "adj_y": adj_y})
    compare_with_litert(g, random_feeds(g, rng), tol=2e-5)


@pytest.mark.parametrize("op_type", ["MEAN", "SUM"])
@pytest.mark.parametrize(
    "shape,axes",
    [((1, 64, 32), [-1]), ((1, 64, 32), [1]), ((2, 5, 6, 3), [3]), ((2, 5, 6, 3), [0, 3]),
     ((2, 5, 6, 3), [2]), ((4, 9), [0]), ((2, 3, 4, 5), [1, 2, 3])],
    ids=str,
)  # fmt: skip
@pytest.mark.parametrize("keep", [True, False])
def test_reduce_any_axes(op_type, shape, axes, keep):
    g = single_op_graph(op_type, [shape, np.array(axes, np.int32)], {"keep_dims": keep})
    compare_with_litert(g, random_feeds(g, np.random.default_rng(7)))
