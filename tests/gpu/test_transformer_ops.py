"""GPU kernels of a ViT's ops vs the reference (itself checked against LiteRT in
tests/reference/test_transformer_ops.py and test_shape_ops.py): NEG, RSQRT,
SQUARED_DIFFERENCE, GELU, BATCH_MATMUL, MEAN/SUM over any axes, LAYER_NORM, TILE, GATHER."""

from __future__ import annotations

import numpy as np
import pytest

from engine.gpu.kernels.base import select
from engine.model.ir import Graph, Op, Tensor
from tests.helpers.gpu import STORAGES, assert_matches, check_single_submit, gpu_context
from tests.helpers.single_op import random_feeds, single_op_graph

ctx = gpu_context()


def _kernel_name(graph: Graph) -> str:
    return select(graph.ops[0], graph).name


@pytest.mark.parametrize("storage", STORAGES)
@pytest.mark.parametrize("op", ["NEG", "GELU", "GELU-approximate"])
def test_unary(op, storage):
    op, _, approx = op.partition("-")
    graph = single_op_graph(op, [(1, 7, 9, 6)], {"approximate": True} if approx else {})
    feeds = random_feeds(graph, np.random.default_rng(0), scale=6.0)
    feeds["input0"].reshape(-1)[:4] = [0.0, 9.0, -9.0, 40.0]
    check_single_submit(graph, feeds, storage=storage)


def test_rsqrt():
    graph = single_op_graph("RSQRT", [(1, 64, 1)])
    feeds = {"input0": np.random.default_rng(1).uniform(1e-6, 40, (1, 64, 1)).astype(np.float32)}
    check_single_submit(graph, feeds)


@pytest.mark.parametrize("storage", STORAGES)
@pytest.mark.parametrize("shapes", [((1, 64, 32), (1, 64, 1)), ((2, 5, 3, 7), (7,))], ids=str)
def test_squared_difference(shapes, storage):
    graph = single_op_graph("SQUARED_DIFFERENCE", list(shapes))
    check_single_submit(
        graph, random_feeds(graph, np.random.default_rng(2), scale=3.0), storage=storage
    )


MATMUL_CASES = [
    # (x, y, adj_x, adj_y); "const": a constant y
    ((1, 2, 64, 16), (1, 2, 16, 64), False, False),  # ViT attention scores
    ((1, 2, 64, 64), (1, 2, 64, 16), False, False),  # attention-weighted values
    ((3, 5, 7), (3, 7, 6), False, False),  # K, N not multiples of 4
    ((2, 1, 5, 7), (1, 3, 7, 2), False, False),  # batch axes broadcast both ways
    ((4, 9), (9, 3), False, False),
    ((2, 7, 5), (2, 7, 6), True, False),
    ((2, 5, 7), (2, 6, 7), False, True),
    ((2, 7, 5), (2, 6, 7), True, True),
    ((1, 6, 10), "const", False, False),
]


@pytest.mark.parametrize("case", MATMUL_CASES, ids=lambda c: f"{c[0]}x{c[1]}-{c[2]:d}{c[3]:d}")
def test_batch_matmul(case):
    x, y, adj_x, adj_y = case
    rng = np.random.default_rng(3)
    if y == "const":
        y = np.asarray(rng.standard_normal((10, 7)), np.float32)
    graph = single_op_graph("BATCH_MATMUL", [x, y], {"adj_x": adj_x, "adj_y": adj_y})
    assert _kernel_name(graph) == "batch_matmul"
    check_single_submit(graph, random_feeds(graph, rng))


def test_batch_matmul_fp16():
    graph = single_op_graph("BATCH_MATMUL", [(1, 2, 64, 16), (1, 2, 16, 64)])
    assert_matches(graph, random_feeds(graph, np.random.default_rng(4)), precision="fp16")


REDUCE_CASES = [
    # (op, shape, axes, keep_dims)
    ("MEAN", (1, 64, 32), [-1], True),  # LayerNorm statistics: channels
    ("MEAN", (1, 64, 32), [1], False),  # ViT token pooling
    ("MEAN", (2, 5, 6, 7), [3], False),  # channels, the output's channels come from W
    ("MEAN", (2, 5, 6, 7), [0, 3], True),
    ("MEAN", (2, 5, 6, 3), [2], False),
    ("SUM", (4, 9), [0], False),
    ("SUM", (2, 3, 4, 5), [1, 2, 3], True),
]


@pytest.mark.parametrize("storage", STORAGES)
@pytest.mark.parametrize("case", REDUCE_CASES, ids=str)
def test_reduce_any_axes(case, storage):
    op, shape, axes, keep = case
    graph = single_op_graph(op, [shape, np.array(axes, np.int32)], {"keep_dims": keep})
    assert _kernel_name(graph) == "reduce"
    check_single_submit(graph, random_feeds(graph, np.random.default_rng(5)), storage=storage)


def test_reduce_fp16():
    graph = single_op_graph("MEAN", [(1, 64, 32), np.array([2], np.int32)], {"keep_dims": True})
    check_single_submit(graph, random_feeds(graph, np.random.default_rng(6)), "fp16")


def _layer_norm_graph(shape, gamma=True, beta=True, eps=1e-6) -> Graph:
    rng = np.random.default_rng(7)
    c = shape[-1]
    tensors = [Tensor("x", shape, "float32")]
    ins = [0]
    for flag, value in ((gamma, 1 + 0.2 * rng.standard_normal(c)), (beta, rng.standard_normal(c))):
        if flag:
            tensors.append(Tensor(f"p{len(tensors)}", (c,), "float32", value.astype(np.float32)))
            ins.append(len(tensors) - 1)
        else:
            ins.append(-1)
    tensors.append(Tensor("y", shape, "float32"))
    op = Op("LAYER_NORM", tuple(ins), (len(tensors) - 1,), {"epsilon": eps})
    return Graph(tensors, [op], [0], [len(tensors) - 1], "layer_norm")


@pytest.mark.parametrize(
    "shape,gamma,beta", [((1, 64, 32), True, True), ((2, 3, 5, 13), True, False), ((7, 6), False, True)]
)  # fmt: skip
def test_layer_norm(shape, gamma, beta):
    graph = _layer_norm_graph(shape, gamma, beta)
    feeds = {"x": np.random.default_rng(8).normal(0.5, 3.0, shape).astype(np.float32)}
    check_single_submit(graph, feeds)


def test_layer_norm_fp16():
    graph = _layer_norm_graph((1, 64, 48))
    feeds = {"x": np.random.default_rng(9).normal(0.5, 3.0, (1, 64, 48)).astype(np.float32)}
    check_single_submit(graph, feeds, "fp16")


@pytest.mark.parametrize(
    "shape,reps", [((1, 5, 6, 3), (1, 2, 1, 3)), ((1, 5, 6, 8), (2, 1, 3, 1)), ((3, 4), (2, 2))],
    ids=str,
)  # fmt: skip
def test_tile(shape, reps):
    graph = single_op_graph("TILE", [shape, np.array(reps, np.int32)])
    assert _kernel_name(graph) == "tile"
    check_single_submit(graph, random_feeds(graph, np.random.default_rng(10)))


def test_gather_evenly_spaced_on_gpu():
    """GATHER with constant indices that form an affine pattern is an affine gather."""
    graph = single_op_graph("GATHER", [(1, 6, 5, 8), np.array([1, 3, 5], np.int32)], {"axis": 1})
    assert _kernel_name(graph) == "slice"
    check_single_submit(graph, random_feeds(graph, np.random.default_rng(11)))


def test_gather_other_indices_fall_back_to_cpu():
    """Indices that are not affine: the reference runs the op (CPU fallback), correctly."""
    from engine.gpu.engine import Engine
    from engine.reference import Interpreter

    graph = single_op_graph("GATHER", [(1, 6, 5, 8), np.array([4, 0, 0, 2], np.int32)], {"axis": 2})
    engine = Engine(graph, transforms=False, storage="buffer")
    assert engine.fallback_ops == ["#0 GATHER"]
    feeds = random_feeds(graph, np.random.default_rng(12))
    np.testing.assert_array_equal(
        engine.run(feeds)["output0"], Interpreter(graph).run(feeds)["output0"]
    )
