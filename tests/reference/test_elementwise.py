"""Binary ops (broadcasting, fused activations), activations and SOFTMAX vs LiteRT."""

from __future__ import annotations

import numpy as np
import pytest

from engine.model import elementwise
from tests.helpers.single_op import compare_with_litert, random_feeds, single_op_graph

pytest.importorskip("ai_edge_litert")

# Ops whose options or domain need cases of their own (below and
# tests/reference/test_transformer_ops.py); every other entry of the table is checked here.
OWN_CASES = {"SQUARED_DIFFERENCE", "LEAKY_RELU", "NEG", "RSQRT", "GELU"}
BINARY = [t for t in elementwise.BINARY if t not in OWN_CASES]
WITH_ACTIVATION = ["ADD", "SUB", "MUL", "DIV"]  # binary ops with a fused activation option
ACTIVATIONS = list(elementwise.FUSED)  # every fused_activation_function value
SHAPE_PAIRS = [
    ((2, 3, 4, 5), (2, 3, 4, 5)),
    ((1, 3, 4, 5), (5,)),
    ((2, 1, 4, 1), (1, 3, 1, 5)),
    ((1, 4, 4, 3), (1, 1, 1, 3)),
    ((4, 5), (1,)),
    ((3,), (2, 1)),
]


def _feeds(g, rng, op_type):
    feeds = random_feeds(g, rng, scale=4.0)
    if op_type == "DIV":  # keep divisors away from zero: |b| in [0.5, 4)
        b = feeds["input1"]
        feeds["input1"] = (np.sign(b) * (0.5 + np.abs(b) * 0.875)).astype(np.float32)
    return feeds


@pytest.mark.parametrize("shapes", SHAPE_PAIRS, ids=str)
@pytest.mark.parametrize("op_type", BINARY)
def test_binary_broadcast(op_type, shapes):
    rng = np.random.default_rng(0)
    g = single_op_graph(op_type, list(shapes))
    compare_with_litert(g, _feeds(g, rng, op_type))


@pytest.mark.parametrize("act", ACTIVATIONS)
@pytest.mark.parametrize("op_type", WITH_ACTIVATION)
def test_binary_fused_activation(op_type, act):
    rng = np.random.default_rng(1)
    g = single_op_graph(op_type, [(1, 3, 4, 5), (1, 1, 4, 5)], {"fused_activation_function": act})
    compare_with_litert(g, _feeds(g, rng, op_type))


@pytest.mark.parametrize("const_shape", [(1, 1, 6), (6,), ()], ids=str)
@pytest.mark.parametrize("op_type", BINARY)
def test_binary_constant_operand(op_type, const_shape):
    rng = np.random.default_rng(2)
    const = rng.uniform(0.5, 2, const_shape) * rng.choice([-1, 1], const_shape)
    const = np.asarray(const, np.float32)
    g = single_op_graph(op_type, [(2, 3, 6), const])
    compare_with_litert(g, random_feeds(g, rng, scale=3.0))


@pytest.mark.parametrize("shape", [(1, 5, 7, 3), (17,), (2, 33)], ids=str)
@pytest.mark.parametrize("op_type", [t for t in elementwise.UNARY if t not in OWN_CASES])
def test_unary(op_type, shape):
    rng = np.random.default_rng(3)
    g = single_op_graph(op_type, [shape])
    compare_with_litert(g, random_feeds(g, rng, scale=8.0))


@pytest.mark.parametrize("op_type", ["LOGISTIC", "TANH", "ELU", "HARD_SWISH"])
def test_unary_large_values(op_type):
    rng = np.random.default_rng(4)
    g = single_op_graph(op_type, [(4, 64)])
    feeds = random_feeds(g, rng, scale=60.0)
    feeds["input0"][0, :5] = [0.0, -0.0, 88.0, -88.0, -103.0]
    compare_with_litert(g, feeds)


@pytest.mark.parametrize("alpha", [0.2, 0.01, 1.5])
def test_leaky_relu(alpha):
    rng = np.random.default_rng(5)
    g = single_op_graph("LEAKY_RELU", [(2, 4, 5, 3)], {"alpha": alpha})
    compare_with_litert(g, random_feeds(g, rng, scale=4.0))


@pytest.mark.parametrize("alpha_shape", [(3,), (1, 1, 3), (4, 1, 3), (1, 4, 5, 3)], ids=str)
def test_prelu(alpha_shape):
    rng = np.random.default_rng(6)
    alpha = rng.uniform(-0.5, 1.0, alpha_shape).astype(np.float32)
    g = single_op_graph("PRELU", [(1, 4, 5, 3), alpha])
    compare_with_litert(g, random_feeds(g, rng, scale=4.0))


@pytest.mark.parametrize("shape", [(2, 7), (1, 3, 4, 10), (5,)], ids=str)
@pytest.mark.parametrize("beta", [1.0, 0.5, 3.0])
def test_softmax(shape, beta):
    rng = np.random.default_rng(7)
    g = single_op_graph("SOFTMAX", [shape], {"beta": beta})
    compare_with_litert(g, random_feeds(g, rng, scale=6.0))
