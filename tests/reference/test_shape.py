"""Data-movement ops vs LiteRT; no arithmetic, so results must match exactly."""

from __future__ import annotations

import numpy as np
import pytest

from engine.reference import Interpreter
from tests.helpers.single_op import compare_with_litert, random_feeds, single_op_graph

pytest.importorskip("ai_edge_litert")


def _i32(v):
    return np.array(v, np.int32)


def _check(g, seed=0):
    compare_with_litert(g, random_feeds(g, np.random.default_rng(seed)), tol=0.0)


@pytest.mark.parametrize(
    "shape,paddings",
    [
        ((1, 4, 5, 3), [[0, 0], [1, 2], [0, 3], [0, 0]]),
        ((1, 4, 5, 3), [[0, 0], [0, 0], [0, 0], [2, 1]]),
        ((3, 4), [[1, 0], [2, 2]]),
        ((2, 3, 4), [[0, 1], [1, 1], [3, 0]]),
    ],
    ids=str,
)
def test_pad(shape, paddings):
    _check(single_op_graph("PAD", [shape, _i32(paddings)]))


@pytest.mark.parametrize("value", [np.array([0.5], np.float32), np.array(-2.0, np.float32)])
def test_padv2(value):
    _check(single_op_graph("PADV2", [(1, 3, 3, 2), _i32([[0, 0], [1, 1], [2, 0], [0, 0]]), value]))


@pytest.mark.parametrize("target", [[1, -1, 6], [30], [2, 3, 5], [-1]], ids=str)
def test_reshape_shape_input(target):
    _check(single_op_graph("RESHAPE", [(1, 5, 6), _i32(target)]))


def test_reshape_new_shape_attr():
    _check(single_op_graph("RESHAPE", [(2, 3, 4)], {"new_shape": (4, -1)}))


@pytest.mark.parametrize(
    "shapes,axis",
    [
        ([(1, 4, 5, 3), (1, 4, 5, 2), (1, 4, 5, 7)], 3),
        ([(1, 4, 5, 3), (1, 4, 5, 1)], -1),
        ([(2, 1, 3), (2, 4, 3)], 1),
        ([(2, 3), (2, 3), (2, 3)], 0),
    ],
    ids=str,
)
def test_concatenation(shapes, axis):
    g = single_op_graph(
        "CONCATENATION", shapes, {"axis": axis, "fused_activation_function": "NONE"}
    )
    _check(g)


def test_concatenation_constant_input():
    const = np.linspace(-8, 8, 2 * 3 * 2, dtype=np.float32).reshape(2, 3, 2)
    _check(single_op_graph("CONCATENATION", [(2, 3, 4), const], {"axis": 2}))


@pytest.mark.parametrize(
    "act,lo,hi", [("RELU", 0, np.inf), ("RELU6", 0, 6), ("RELU_N1_TO_1", -1, 1)]
)
def test_concatenation_fused_activation(act, lo, hi):
    # LiteRT refuses a fused activation on float CONCATENATION (concatenation.cc); the
    # reference applies it, as the schema describes and the GPU delegate does.
    g = single_op_graph("CONCATENATION", [(2, 3, 4), (2, 3, 1)], {"axis": 2})
    feeds = random_feeds(g, np.random.default_rng(1), scale=8.0)
    plain = compare_with_litert(g, feeds, tol=0.0)["output0"]
    fused = single_op_graph(
        "CONCATENATION", [(2, 3, 4), (2, 3, 1)], {"axis": 2, "fused_activation_function": act}
    )
    got = Interpreter(fused).run(feeds)["output0"]
    np.testing.assert_array_equal(got, np.clip(plain, lo, hi).astype(np.float32))


@pytest.mark.parametrize(
    "shape,axis,n", [((1, 4, 6, 4), 3, 2), ((1, 6, 2, 3), 1, 3), ((2, 3, 4), -1, 4), ((4, 3), 0, 1)]
)
def test_split(shape, axis, n):
    g = single_op_graph("SPLIT", [_i32(axis), shape], {"num_splits": n}, num_outputs=n)
    _check(g)


@pytest.mark.parametrize(
    "shape,begin,size",
    [
        ((2, 5, 6, 4), [0, 1, 2, 0], [2, 3, -1, 2]),
        ((2, 5, 6, 4), [1, 0, 0, 3], [1, -1, 6, 1]),
        ((7, 3), [2, 1], [4, 2]),
    ],
    ids=str,
)
def test_slice(shape, begin, size):
    _check(single_op_graph("SLICE", [shape, _i32(begin), _i32(size)]))


SS = (2, 5, 6, 4)
STRIDED_CASES = [
    # begin, end, strides, attrs
    ([0, 1, 0, 0], [2, 4, 6, 4], [1, 1, 2, 1], {}),
    ([-1, -4, 1, 0], [2, -1, 5, 3], [1, 2, 1, 1], {}),
    ([1, 4, 5, 3], [0, 0, 0, 0], [-1, -1, -2, -1], {"end_mask": 0b0101}),
    ([1, 2, 3, 1], [0, 4, 0, 3], [1, 1, 1, 1], {"begin_mask": 0b1001, "end_mask": 0b0101}),
    ([0, 2, 0, 0], [1, 3, 6, 4], [1, 1, 1, 1], {"shrink_axis_mask": 0b0011}),
    ([0, -1, 0, 2], [1, 0, 6, 3], [1, 1, 3, 1], {"shrink_axis_mask": 0b1010}),
    ([-100, -100, 2, 0], [100, 100, 100, 100], [1, 2, 1, 3], {}),
    ([100, 100, 4, 3], [-100, -100, 0, 0], [-1, -2, -1, -1], {}),
    ([0, 1, 1, 0], [2, 2, 3, 4], [1, 1, 1, 1], {"offset": True}),
    ([0, 1], [0, 3], [1, 1], {"ellipsis_mask": 0b01}),
    ([1, 0, 1], [2, 0, 3], [1, 1, 1], {"ellipsis_mask": 0b010}),
    (
        [0, 1, 0],
        [0, 4, 0],
        [1, 2, 1],
        {"new_axis_mask": 0b001, "begin_mask": 0b100, "end_mask": 0b100},
    ),
    ([0, 0, 0], [1, 5, 6], [1, 1, 1], {"shrink_axis_mask": 0b001}),
]


@pytest.mark.parametrize("begin,end,strides,attrs", STRIDED_CASES, ids=str)
def test_strided_slice(begin, end, strides, attrs):
    g = single_op_graph("STRIDED_SLICE", [SS, _i32(begin), _i32(end), _i32(strides)], attrs)
    _check(g)


@pytest.mark.parametrize("shape,block", [((1, 3, 4, 8), 2), ((2, 2, 3, 18), 3), ((1, 2, 2, 4), 2)])
def test_depth_to_space(shape, block):
    _check(single_op_graph("DEPTH_TO_SPACE", [shape], {"block_size": block}))


@pytest.mark.parametrize("shape,block", [((1, 4, 6, 3), 2), ((2, 6, 3, 2), 3)])
def test_space_to_depth(shape, block):
    _check(single_op_graph("SPACE_TO_DEPTH", [shape], {"block_size": block}))


@pytest.mark.parametrize(
    "shape,perm",
    [
        ((1, 4, 5, 3), [0, 3, 1, 2]),
        ((2, 4, 5, 3), [0, 2, 1, 3]),
        ((3, 4, 5), [2, 0, 1]),
        ((3, 7), [1, 0]),
    ],
    ids=str,
)
def test_transpose(shape, perm):
    _check(single_op_graph("TRANSPOSE", [shape, _i32(perm)]))
