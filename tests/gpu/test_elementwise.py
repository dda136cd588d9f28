"""Element-wise kernels (binary with broadcasting, activations, PRELU) vs the reference."""

from __future__ import annotations

import numpy as np
import pytest

from engine.model.elementwise import BINARY, UNARY
from tests.helpers.gpu import STORAGES, check_single_submit, gpu_context
from tests.helpers.single_op import random_feeds, single_op_graph

ctx = gpu_context()


def const(shape, seed=0, scale=1.0):
    rng = np.random.default_rng(seed)
    return np.asarray(rng.standard_normal(shape) * scale, np.float32)


BINARY_CASES = [
    # (op, a, b, fused activation); a shape tuple is a graph input, an array a constant
    ("ADD", (1, 9, 7, 6), (1, 9, 7, 6), "NONE"),
    ("ADD", (1, 16, 16, 32), (1, 16, 16, 32), "RELU"),
    ("SUB", (1, 5, 7, 13), (13,), "RELU6"),
    ("MUL", (1, 6, 5, 10), (1, 1, 1, 10), "NONE"),  # SE gating: tensor per channel
    ("MUL", (1, 6, 5, 7), const((1, 1, 1, 7)), "RELU_N1_TO_1"),
    ("ADD", (1, 4, 5, 9), const(()), "NONE"),  # scalar constant -> literal
    ("DIV", const(()), (1, 4, 5, 3), "NONE"),  # constant on the left
    ("MUL", (1, 6, 7, 5), (1, 6, 7, 1), "NONE"),  # C=1 operand: lane 0 replicated
    ("SUB", (1, 6, 7, 1), (1, 6, 7, 11), "NONE"),
    ("MAXIMUM", (1, 1, 7, 8), (1, 6, 1, 8), "NONE"),  # both broadcast
    ("MINIMUM", (2, 3, 4, 5), (2, 1, 1, 5), "RELU"),  # batch > 1
    ("MUL", (1, 468, 3), const((1,), scale=0.25), "NONE"),  # face_landmark_with_attention
    ("MUL", (1, 4, 4), const((1, 4, 4)), "NONE"),  # full-shape constant
    ("ADD", (1, 3, 4, 2), const((3, 4, 2)), "NONE"),
    ("DIV", (1, 8, 9, 4), (4,), "NONE"),
    ("ADD", (1, 3, 70, 600), const((600,)), "NONE"),  # 2.4 KB constant in a uniform
    ("MUL", (1, 2, 3, 17000), const((17000,)), "NONE"),  # 68 KB: storage
]


def test_every_binary_op_of_the_table_has_cases():
    """A binary op added to engine/model/elementwise.py gets its GPU cases here
    (SQUARED_DIFFERENCE's are in test_transformer_ops.py)."""
    assert {case[0] for case in BINARY_CASES} | {"SQUARED_DIFFERENCE"} == set(BINARY)


@pytest.mark.parametrize("storage", STORAGES)
@pytest.mark.parametrize("case", BINARY_CASES, ids=lambda c: f"{c[0]}-{c[3]}")
def test_binary(case, storage):
    op, a, b, act = case
    graph = single_op_graph(op, [a, b], {"fused_activation_function": act})
    rng = np.random.default_rng(1)
    feeds = random_feeds(graph, rng)
    if op == "DIV":  # keep divisors away from 0
        feeds = {k: np.where(np.abs(v) < 0.1, 0.5, v).astype(np.float32) for k, v in feeds.items()}
    check_single_submit(graph, feeds, storage=storage)


def test_constant_operands():
    """Finite scalars become literals; others a uniform (fp32, <= 64 KiB) or storage array."""
    from engine.gpu.kernels.base import BuildContext
    from engine.gpu.kernels.elementwise import const_operand

    fp32, fp16 = BuildContext(), BuildContext(precision="fp16")
    assert const_operand(np.float32(0.25), fp32, "a_buf") == ("vec4<E>(2.5e-01)", None)
    assert const_operand(np.float32(np.inf), fp32, "a_buf")[0] == "uniform"
    assert const_operand(np.float32(1e6), fp16, "a_buf")[0] == "storage"
    assert const_operand(const((7,)), fp32, "a_buf")[1].data.shape == (8,)
    # vec4<f16> has an 8-byte stride: no uniform array of it
    assert const_operand(const((7,)), fp16, "a_buf")[0] == "storage"
    assert const_operand(const((4097 * 4,)), fp32, "a_buf")[0] == "storage"


# Unary ops whose options or domain need cases of their own (test_leaky_relu below,
# tests/gpu/test_transformer_ops.py); every other entry of the table is checked here.
OWN_CASES = {"LEAKY_RELU", "NEG", "RSQRT", "GELU"}


@pytest.mark.parametrize("op", [t for t in UNARY if t not in OWN_CASES])
@pytest.mark.parametrize("storage", STORAGES)
@pytest.mark.parametrize("shape", [(1, 7, 9, 5), (1, 12, 1, 8), (1, 256, 1)])
def test_unary(op, shape, storage):
    graph = single_op_graph(op, [shape])
    check_single_submit(
        graph, random_feeds(graph, np.random.default_rng(2), scale=8.0), storage=storage
    )


@pytest.mark.parametrize("storage", STORAGES)
def test_unary_extremes(storage):
    """Stable forms: no NaN/inf from large |x|; sigmoid(0)=0.5 never leaks into padded lanes."""
    x = np.array([-1e4, -90, -20, -1e-3, 0, 1e-3, 20, 90, 1e4], np.float32).reshape(1, 1, 3, 3)
    for op in ("LOGISTIC", "TANH", "ELU", "HARD_SWISH"):
        graph = single_op_graph(op, [x.shape])
        check_single_submit(graph, {"input0": x}, storage=storage)


@pytest.mark.parametrize("alpha", [0.2, -0.5])
def test_leaky_relu(alpha):
    graph = single_op_graph("LEAKY_RELU", [(1, 5, 6, 7)], {"alpha": alpha})
    check_single_submit(graph, random_feeds(graph, np.random.default_rng(3)))


PRELU_CASES = [
    ((1, 8, 8, 16), const((1, 1, 16))),  # face_landmark
    ((1, 5, 6, 7), const((1, 1, 7))),
    ((1, 5, 6, 7), const((5, 6, 7))),  # full HWC slopes
    ((1, 5, 6, 3), const((1, 1, 1))),
    ((1, 4, 5, 6), (1, 1, 6)),  # slopes from a tensor
]


@pytest.mark.parametrize("storage", STORAGES)
@pytest.mark.parametrize("case", PRELU_CASES, ids=lambda c: str(c[0]))
def test_prelu(case, storage):
    x, alpha = case
    graph = single_op_graph("PRELU", [x, alpha])
    check_single_submit(graph, random_feeds(graph, np.random.default_rng(4)), storage=storage)


@pytest.mark.skipif(not ctx.has_f16, reason="adapter lacks shader-f16")
@pytest.mark.parametrize(
    "op,a,b",
    [("ADD", (1, 6, 7, 10), (1, 6, 7, 10)), ("MUL", (1, 6, 7, 10), const((10,)))],
)
@pytest.mark.parametrize("storage", STORAGES)
def test_binary_fp16(op, a, b, storage):
    graph = single_op_graph(op, [a, b], {"fused_activation_function": "RELU6"})
    check_single_submit(graph, random_feeds(graph, np.random.default_rng(5)), "fp16", storage)


@pytest.mark.skipif(not ctx.has_f16, reason="adapter lacks shader-f16")
@pytest.mark.parametrize("storage", STORAGES)
def test_prelu_fp16(storage):
    graph = single_op_graph("PRELU", [(1, 5, 6, 7), const((1, 1, 7))])
    check_single_submit(graph, random_feeds(graph, np.random.default_rng(6)), "fp16", storage)
