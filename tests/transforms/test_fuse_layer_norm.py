"""fuse_layer_norm: the converter's LayerNorm chains become LAYER_NORM ops; the fused
graph gives LiteRT's outputs (on the original file); non-LayerNorm regions decline."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from engine.model.importer import load_tflite
from engine.model.ir import Graph, Op, Tensor
from engine.reference import Interpreter
from engine.transforms.fuse_layer_norm import fuse_layer_norm
from tests.helpers.single_op import max_error

FIXTURES = Path(__file__).resolve().parents[1] / "data" / "ops"
VIT = FIXTURES / "vit_tiny.tflite"


def test_vit_layer_norms_fuse():
    graph = load_tflite(VIT)
    after, result = fuse_layer_norm(graph)
    assert result.applied == 5 and not result.declined, result
    hist = after.op_histogram()
    assert hist["LAYER_NORM"] == 5 and hist["MEAN"] == 1  # the token mean stays
    assert not {"NEG", "RSQRT", "SQUARED_DIFFERENCE"} & set(hist)
    norm = next(op for op in after.ops if op.type == "LAYER_NORM")
    assert norm.attrs["epsilon"] == pytest.approx(1e-6)
    assert all(t >= 0 for t in norm.inputs)  # gamma and beta found (random, non-zero)


def test_fused_vit_matches_litert():
    pytest.importorskip("ai_edge_litert")
    from ai_edge_litert.interpreter import Interpreter as LiteRT

    x = np.random.default_rng(0).standard_normal((1, 32, 32, 3)).astype(np.float32)
    it = LiteRT(model_path=str(VIT))
    it.allocate_tensors()
    it.set_tensor(it.get_input_details()[0]["index"], x)
    it.invoke()
    want = it.get_tensor(it.get_output_details()[0]["index"])
    fused, _ = fuse_layer_norm(load_tflite(VIT))
    got = next(iter(Interpreter(fused).run([x]).values()))
    assert max_error(want, got) <= 1e-5


def _layer_norm_chain(tail: str) -> Graph:
    """x [1, 5, 8] -> the Keras LayerNorm chain with one of several tails."""
    rng = np.random.default_rng(1)
    t = [Tensor("x", (1, 5, 8), "float32")]

    def add(name, shape, data=None):
        t.append(Tensor(name, shape, "float32" if data is None else data.dtype.name, data))
        return len(t) - 1

    axis = add("axis", (1,), np.array([-1], np.int32))
    eps = add("eps", (), np.array(1e-3, np.float32))
    gamma = add("gamma", (8,), rng.uniform(0.5, 1.5, 8).astype(np.float32))
    beta = add("beta", (8,), rng.standard_normal(8).astype(np.float32))
    row = (1, 5, 1)
    m, sq, v = add("m", row), add("sq", (1, 5, 8)), add("v", row)
    ve, r, g = add("ve", row), add("r", row), add("g", (1, 5, 8))
    ops = [
        Op("MEAN", (0, axis), (m,), {"keep_dims": True}),
        Op("SQUARED_DIFFERENCE", (0, m), (sq,)),
        Op("MEAN", (sq, axis), (v,), {"keep_dims": True}),
        Op("ADD", (v, eps), (ve,), {"fused_activation_function": "NONE"}),
        Op("RSQRT", (ve,), (r,)),
        Op("MUL", (r, gamma), (g,), {"fused_activation_function": "NONE"}),
    ]
    act = {"fused_activation_function": "NONE"}
    if tail == "keras":  # x*g + (beta - m*g) as NEG/MUL/ADD
        nm, a, b, xg, y = add("nm", row), add("a", (1, 5, 8)), add("b", (1, 5, 8)), add(
            "xg", (1, 5, 8)), add("y", (1, 5, 8))  # fmt: skip
        ops[1:1] = [Op("NEG", (m,), (nm,))]
        ops += [Op("MUL", (nm, g), (a,), act), Op("ADD", (a, beta), (b,), act),
                Op("MUL", (0, g), (xg,), act), Op("ADD", (xg, b), (y,), act)]  # fmt: skip
    elif tail == "sub":  # (x - m) * g + beta
        d, dg, y = add("d", (1, 5, 8)), add("dg", (1, 5, 8)), add("y", (1, 5, 8))
        ops += [Op("SUB", (0, m), (d,), act), Op("MUL", (d, g), (dg,), act),
                Op("ADD", (dg, beta), (y,), act)]  # fmt: skip
    else:  # "not": x * g + beta, the mean never subtracted
        xg, y = add("xg", (1, 5, 8)), add("y", (1, 5, 8))
        ops += [Op("MUL", (0, g), (xg,), act), Op("ADD", (xg, beta), (y,), act)]
    return Graph(t, ops, [0], [len(t) - 1], "hand-made")


@pytest.mark.parametrize("tail", ["keras", "sub"])
def test_tails_fuse_and_match(tail):
    graph = _layer_norm_chain(tail)
    after, result = fuse_layer_norm(graph)
    assert result.applied == 1
    assert [op.type for op in after.ops] == ["LAYER_NORM"]
    x = np.random.default_rng(2).normal(1.0, 3.0, (1, 5, 8)).astype(np.float32)
    want, got = Interpreter(graph, np.float64).run([x]), Interpreter(after, np.float64).run([x])
    assert max_error(want["y"], got["y"]) <= 1e-12


def test_region_that_is_not_a_layer_norm_declines():
    graph = _layer_norm_chain("not")
    after, result = fuse_layer_norm(graph)
    assert result.applied == 0
    assert "no closed tail" in result.declined[0]
    assert after.ops == graph.ops


def test_inner_tensor_read_elsewhere_declines():
    graph = _layer_norm_chain("sub")
    # the rsqrt is also a graph output: the chain must stay
    graph = replace(graph, outputs=[*graph.outputs, graph.ops[4].outputs[0]])
    _, result = fuse_layer_norm(graph)
    assert result.applied == 0 and result.declined
