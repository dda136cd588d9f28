"""SHAPE, PACK, GATHER, EXPAND_DIMS, SQUEEZE, TILE and REDUCE_PROD vs LiteRT: exact, on
float tensors and on the int32 shape arithmetic of dynamic-batch models."""

from __future__ import annotations

import numpy as np
import pytest

from engine.reference import Interpreter
from tests.helpers.single_op import (
    compare_with_litert,
    random_feeds,
    run_litert,
    single_op_graph,
)

pytest.importorskip("ai_edge_litert")


def _i32(v):
    return np.array(v, np.int32)


def _check_exact(graph, seed=0):
    """Reference (float32 and float64 compute) equals LiteRT's reference kernels exactly."""
    rng = np.random.default_rng(seed)
    feeds = {
        graph.tensors[t].name: rng.uniform(-4, 4, graph.tensors[t].shape).astype(np.float32)
        for t in graph.inputs
    }
    want = run_litert(graph, feeds)
    for dtype in (np.float32, np.float64):
        got = Interpreter(graph, dtype).run(feeds)
        for name, ref in want.items():
            assert got[name].shape == ref.shape, name
            if ref.dtype.kind == "f":
                np.testing.assert_array_equal(got[name].astype(np.float32), ref)
            else:
                assert got[name].dtype == ref.dtype, (got[name].dtype, ref.dtype)
                np.testing.assert_array_equal(got[name], ref)


@pytest.mark.parametrize("shape", [(1, 6, 6, 16), (3, 5), (7,)], ids=str)
def test_shape(shape):
    _check_exact(single_op_graph("SHAPE", [shape], {"out_type": 2}))


def test_shape_int64():
    _check_exact(single_op_graph("SHAPE", [(2, 3)], {"out_type": 4}))


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_pack_float(axis):
    _check_exact(
        single_op_graph("PACK", [(3, 4), (3, 4), (3, 4)], {"values_count": 3, "axis": axis})
    )


def test_pack_int_scalars():
    """Flatten's target shape: PACK(batch, -1)."""
    g = single_op_graph("PACK", [_i32(3), _i32(-1)], {"values_count": 2, "axis": 0})
    _check_exact(g)


@pytest.mark.parametrize(
    "shape,indices,axis",
    [((4,), _i32(0), 0), ((3,), _i32([0, 1]), 0), ((5, 6), _i32([[4, 0], [1, 1]]), 1),
     ((2, 7, 3), _i32([6, 2, 2]), -2)],
    ids=str,
)  # fmt: skip
def test_gather(shape, indices, axis):
    _check_exact(single_op_graph("GATHER", [shape, indices], {"axis": axis, "batch_dims": 0}))


def test_gather_int_params():
    _check_exact(single_op_graph("GATHER", [_i32([1, 12, 12, 16]), _i32([1, 2])], {"axis": 0}))


@pytest.mark.parametrize("shape,axis", [((3, 4), 0), ((3, 4), 2), ((3, 4), -1), ((), 0)], ids=str)
def test_expand_dims(shape, axis):
    _check_exact(single_op_graph("EXPAND_DIMS", [shape, _i32([axis])]))


@pytest.mark.parametrize(
    "shape,dims", [((1, 3, 1, 4), (0, 2)), ((1, 3, 1, 4), ()), ((2, 1), (-1,))]
)
def test_squeeze(shape, dims):
    _check_exact(single_op_graph("SQUEEZE", [shape], {"squeeze_dims": dims}))


@pytest.mark.parametrize(
    "shape,reps",
    [((1, 12, 1, 16, 8), [1, 1, 2, 1, 1]), ((2, 3, 4), [2, 1, 3]), ((1, 5, 6, 3), [2, 2, 1, 3]),
     ((5,), [4])],
    ids=str,
)  # fmt: skip
def test_tile(shape, reps):
    _check_exact(single_op_graph("TILE", [shape, _i32(reps)]))


@pytest.mark.parametrize("keep", [False, True])
def test_reduce_prod_int(keep):
    g = single_op_graph("REDUCE_PROD", [_i32([3, 12, 12, 16]), _i32([0])], {"keep_dims": keep})
    _check_exact(g)


def test_reduce_prod_float():
    """Floats: the product's rounding depends on the order, so within 1e-5."""
    g = single_op_graph("REDUCE_PROD", [(2, 3, 4), _i32([1])], {"keep_dims": False})
    compare_with_litert(g, random_feeds(g, np.random.default_rng(0), scale=2.0))
