"""Data-movement kernels (reshape, concat, split, slices, transpose, depth/space) vs the
reference interpreter; every output's padded PHWC4 lanes must be written as 0."""

from __future__ import annotations

import numpy as np
import pytest

from engine.gpu.kernels.base import select, shape4
from engine.model.ir import Graph, Op, Tensor
from tests.helpers.gpu import assert_matches, gpu_context
from tests.helpers.single_op import random_feeds, single_op_graph

ctx = gpu_context()


def i32(*v) -> np.ndarray:
    return np.array(v, np.int32)


def check(graph: Graph, kernel: str, precision: str = "fp32", seed: int = 0):
    """GPU kernel `kernel` runs the op (no CPU fallback), matches, and zeroes padded lanes."""
    chosen = select(graph.ops[0], graph)
    assert chosen is not None and chosen.name == kernel, chosen
    engine = assert_matches(graph, random_feeds(graph, np.random.default_rng(seed)), precision)
    assert not engine.fallback_ops
    dt = np.float16 if precision == "fp16" else np.float32
    for t in graph.outputs:
        s4 = shape4(graph, t)
        raw = np.frombuffer(_read_raw(engine, t), dt)
        lanes = raw[: s4.vec4_count * 4].reshape(s4.s, -1, 4)[-1]
        assert not lanes[:, (s4.c - 1) % 4 + 1 :].any(), "padded lanes not zero"
    return engine


def _read_raw(engine, t: int) -> bytes:
    """The PHWC4 bytes of tensor t (a whole buffer or a View into a shared one)."""
    buf = engine.resources.buffers[t]
    if hasattr(buf, "buffer"):
        return ctx.device.queue.read_buffer(buf.buffer, buf.offset, buf.size)
    return ctx.device.queue.read_buffer(buf)


RESHAPES = [
    # (input shape, new shape): the model cases, then C kept / both C % 4 == 0 / lanes
    ((1, 16, 16, 32), (1, -1, 16)),
    ((1, 8, 8, 96), (1, -1, 16)),
    ((1, 8, 8, 6), (1, -1, 1)),
    ((1, 1, 1, 1404), (1, 468, 3)),
    ((1, 71, 2), (1, 1, 1, 142)),
    ((1, 7, 7, 72), (1, -1, 12)),
    ((1, 1, 1, 213), (1, -1)),
    ((2, 3, 4, 5), (4, 3, 2, 5)),
    ((1, 6, 5, 7), (3, 2, 35)),
    ((1, 4, 6, 3), (72,)),
    ((24,), (2, 3, 4)),
]


@pytest.mark.parametrize("case", RESHAPES, ids=str)
def test_reshape(case):
    shape, new = case
    check(single_op_graph("RESHAPE", [shape], {"new_shape": new}), "reshape")


def test_reshape_shape_input_and_fp16():
    g = single_op_graph("RESHAPE", [(1, 8, 8, 6), i32(1, -1, 3)])
    check(g, "reshape")
    if ctx.has_f16:
        check(g, "reshape", precision="fp16")


CONCATS = [
    # (input shapes, axis, activation)
    ([(1, 512, 16), (1, 384, 16)], 1, "NONE"),  # face_detection anchors
    ([(1, 1568, 1), (1, 392, 1), (1, 294, 1)], 1, "NONE"),
    ([(1, 5, 6, 3), (1, 5, 6, 5), (1, 5, 6, 2)], 3, "RELU"),  # lanes
    ([(1, 5, 6, 8), (1, 5, 6, 4), (1, 5, 6, 7)], -1, "RELU6"),  # whole slices
    ([(1, 4, 3, 1), (1, 4, 3, 1), (1, 4, 3, 13)], 3, "NONE"),
    ([(2, 5, 6, 3), (1, 5, 6, 3)], 0, "NONE"),  # batch
    ([(1, 2, 6, 9), (1, 5, 6, 9)], 1, "RELU_N1_TO_1"),  # height
    ([(1, 4, 2, 5), (1, 4, 7, 5), (1, 4, 1, 5)], 2, "NONE"),  # width
    ([(3, 4), (3, 6)], 1, "NONE"),
    ([(3, 4), (2, 4)], 0, "NONE"),
    ([(1, 3, 3, 2)] * 11, 3, "NONE"),  # lanes, > 7 inputs: several dispatches
    ([(1, 3, 3, 4)] * 10, 3, "NONE"),  # slices, > 7 inputs
    ([(1, 2, 3, 3)] * 9, 1, "RELU"),  # height, > 7 inputs
    ([(1, 2, 3, 5)] * 9, 2, "NONE"),  # width, > 7 inputs: split mid-row
]


@pytest.mark.parametrize("case", CONCATS, ids=str)
def test_concatenation(case):
    shapes, axis, act = case
    g = single_op_graph("CONCATENATION", shapes, {"axis": axis, "fused_activation_function": act})
    engine = check(g, "concat")
    if len(shapes) > 7:
        assert engine.dispatch_count > 1


def test_concatenation_constant_input_and_epilogue():
    """A constant operand (bound as packed storage) and a fused residual add."""
    rng = np.random.default_rng(1)
    const = rng.standard_normal((1, 4, 5, 3)).astype(np.float32)
    g = single_op_graph(
        "CONCATENATION", [(1, 4, 5, 6), const], {"axis": 3, "fused_activation_function": "NONE"}
    )
    tensors = [*g.tensors, Tensor("residual", (1, 4, 5, 9), "float32")]
    op = g.ops[0]
    attrs = {**op.attrs, "epilogue": (("add", len(tensors) - 1), ("act", "LOGISTIC"))}
    g = Graph(tensors, [Op(op.type, op.inputs, op.outputs, attrs)], [0, 3], g.outputs)
    check(g, "concat")


SPLITS = [((1, 4, 5, 12), 3, 3), ((1, 4, 5, 14), 3, 2), ((1, 6, 5, 7), 1, 3), ((6, 4), 0, 2)]


@pytest.mark.parametrize("case", SPLITS, ids=str)
def test_split(case):
    shape, axis, n = case
    g = single_op_graph("SPLIT", [i32(axis), shape], {"num_splits": n}, num_outputs=n)
    check(g, "slice")


SLICES = [
    ((1, 6, 7, 9), (0, 1, 2, 4), (1, 3, -1, 5)),  # vec4 (channel begin % 4 == 0)
    ((1, 6, 7, 9), (0, 1, 2, 3), (1, 3, -1, 5)),  # lanes
    ((2, 5, 4, 3), (1, 0, 1, 0), (1, -1, 2, 3)),
    ((5, 7), (1, 2), (3, 4)),
]


@pytest.mark.parametrize("case", SLICES, ids=str)
def test_slice(case):
    shape, begin, size = case
    check(single_op_graph("SLICE", [shape, i32(*begin), i32(*size)]), "slice")


def _ss(begin, end, strides, **masks):
    attrs = {"begin_mask": 0, "end_mask": 0, "shrink_axis_mask": 0, "ellipsis_mask": 0}
    attrs.update({"new_axis_mask": 0, "offset": False, **masks})
    return [i32(*begin), i32(*end), i32(*strides)], attrs


STRIDED = [
    ((1, 4, 4, 64), _ss((0, 0, 0, 0), (1, 4, 4, 32), (1, 1, 1, 1))),  # face_landmark
    ((1, 1, 1, 1404), _ss((0, 0, 0, 0), (1, 1, 1, 1404), (1, 1, 1, 1))),  # identity: copy
    ((1, 9, 8, 10), _ss((0, 1, 7, 1), (1, 9, 0, 9), (1, 2, -2, 3), begin_mask=1)),
    ((1, 9, 8, 10), _ss((0, 0, 0, 0), (0, 0, 0, 6), (1, 1, 1, 1), begin_mask=7, end_mask=7)),
    ((1, 9, 8, 10), _ss((0, 2, 0), (1, 3, 5), (1, 1, 1), shrink_axis_mask=2, end_mask=4)),
    ((1, 9, 8, 10), _ss((0, 1), (0, 5), (1, 2), ellipsis_mask=1)),  # ..., 1:5:2 on C
    ((9, 10), _ss((0, 0, 1), (0, 0, 8), (1, 1, 3), new_axis_mask=1, begin_mask=2, end_mask=2)),
    ((1, 5, 6, 7), _ss((0, -1, -2, 6), (1, -6, 0, -8), (1, -1, -1, -2))),  # negative strides
    ((1, 5, 6, 7), _ss((0, 1, 1, 1), (1, 2, 3, 2), (1, 1, 1, 1), offset=True)),
]


@pytest.mark.parametrize("case", STRIDED, ids=str)
def test_strided_slice(case):
    shape, (consts, attrs) = case
    check(single_op_graph("STRIDED_SLICE", [shape, *consts], attrs), "slice")


TRANSPOSES = [
    ((2, 3, 5, 7), (0, 3, 1, 2)),
    ((1, 4, 6, 8), (0, 2, 1, 3)),  # channels kept: vec4
    ((2, 3, 5, 7), (3, 2, 1, 0)),
    ((3, 5), (1, 0)),
    ((4, 3, 6), (2, 0, 1)),
]


@pytest.mark.parametrize("case", TRANSPOSES, ids=str)
def test_transpose(case):
    shape, perm = case
    check(single_op_graph("TRANSPOSE", [shape, i32(*perm)]), "slice")


DEPTH_SPACE = [
    ("DEPTH_TO_SPACE", (1, 24, 24, 64), 2),  # selfie: vec4
    ("DEPTH_TO_SPACE", (1, 24, 24, 4), 2),  # C_out = 1: lanes
    ("DEPTH_TO_SPACE", (2, 3, 5, 27), 3),
    ("SPACE_TO_DEPTH", (1, 6, 8, 3), 2),
    ("SPACE_TO_DEPTH", (1, 6, 8, 4), 2),
    ("SPACE_TO_DEPTH", (2, 9, 6, 5), 3),
]


@pytest.mark.parametrize("case", DEPTH_SPACE, ids=str)
def test_depth_space(case):
    op, shape, block = case
    check(single_op_graph(op, [shape], {"block_size": block}), "depth_space")


def test_fp16_gathers():
    if not ctx.has_f16:
        pytest.skip("no shader-f16")
    for g, k in [
        (single_op_graph("SPLIT", [i32(3), (1, 4, 5, 6)], {"num_splits": 2}, num_outputs=2),
         "slice"),
        (single_op_graph("DEPTH_TO_SPACE", [(1, 3, 4, 12)], {"block_size": 2}), "depth_space"),
        (single_op_graph("CONCATENATION", [(1, 3, 4, 3), (1, 3, 4, 2)], {"axis": 3}), "concat"),
    ]:  # fmt: skip
        check(g, k, precision="fp16")
