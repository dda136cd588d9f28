"""to_float / fuse_quantize (engine/transforms/quantized.py): the float form of quantized
graphs, checked against the integer reference (itself bit-exact with LiteRT)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from engine.errors import ModelError
from engine.model.importer import load_tflite
from engine.model.ir import Graph, Op, Quantization, Tensor
from engine.reference import Interpreter, quantized
from engine.transforms import run_with_log
from engine.transforms.quantized import to_float
from tests.helpers.quant_ops import activation, const, quant_graph

DATA = Path(__file__).resolve().parents[1] / "data" / "quant"


def _input(g: Graph, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """(feed for the quantized graph, the same values as float32 reals)."""
    t = g.tensors[g.inputs[0]]
    x = np.random.default_rng(seed).uniform(-1, 1, t.shape).astype(np.float32)
    if t.dtype != "int8":
        return x, x
    s, z = np.float32(t.quantization.scale[0]), t.quantization.zero_point[0]
    q = np.clip(np.round(x / s) + z, -128, 127).astype(np.int8)
    return q, ((q.astype(np.float64) - z) * s).astype(np.float32)


def test_float_graph_is_unchanged():
    g = load_tflite(DATA / "convnet_fp32.tflite")
    assert to_float(g) is g


@pytest.mark.parametrize("name", ["convnet_int8", "unet_int8", "unet_int8_float_io"])
def test_int8_graph_becomes_float_with_fake_quant(name):
    g = load_tflite(DATA / f"{name}.tflite")
    f = to_float(g)
    assert not any(quantized.quantized_tensors(op, f) for op in f.ops)
    assert all(t.dtype in ("float32", "int32") for t in f.tensors)
    # every op writing an int8 activation that is not a pure move is followed by a QUANTIZE
    rounded = [op for op in g.ops if g.tensors[op.outputs[0]].dtype == "int8"
               and op.type not in ("MAX_POOL_2D", "CONCATENATION", "QUANTIZE")]  # fmt: skip
    added = sum(op.type == "QUANTIZE" for op in f.ops) - sum(op.type == "QUANTIZE" for op in g.ops)
    assert added == len(rounded)
    assert [f.tensors[t].name for t in f.inputs + f.outputs] == [
        g.tensors[t].name for t in g.inputs + g.outputs
    ]


@pytest.mark.parametrize("name", ["convnet_int8", "unet_int8", "convnet_int8_float_io"])
def test_float_form_within_one_step_of_integer_reference(name):
    g = load_tflite(DATA / f"{name}.tflite")
    feed, real = _input(g)
    want = Interpreter(g).run({g.tensors[g.inputs[0]].name: feed})
    out = g.tensors[g.outputs[0]]
    step = (out.quantization or g.tensors[g.ops[-1].inputs[0]].quantization).scale[0]
    transformed, log = run_with_log(to_float(g))
    assert not any(op.type == "QUANTIZE" for op in transformed.ops[1:]), log
    for graph in (to_float(g), transformed):
        got = Interpreter(graph).run({g.tensors[g.inputs[0]].name: real})[out.name]
        ref = want[out.name].astype(np.float64)
        if out.dtype == "int8":
            ref = (ref - out.quantization.zero_point[0]) * np.float32(step)
        assert np.abs(got - ref).max() <= step * 1.0001


def test_dynamic_range_weights_are_dequantized():
    g = load_tflite(DATA / "convnet_dynamic.tflite")
    f = to_float(g)
    for old, new in zip(g.tensors, f.tensors, strict=True):
        if quantized.is_quantized_constant(old):
            q = old.quantization
            shape = [1] * old.data.ndim
            shape[q.axis] = len(q.scale)
            scale = np.asarray(q.scale, np.float32).reshape(shape)
            np.testing.assert_allclose(new.data, old.data * scale, rtol=1e-7)
            assert new.dtype == "float32" and new.quantization is None
    assert [op.type for op in f.ops] == [op.type for op in g.ops]


def test_int16_activation_is_a_model_error():
    x = activation("x", (1, 4, 4, 3), 0.001, 0)
    x = Tensor(x.name, x.shape, "int16", None, x.quantization)
    g = quant_graph("RELU", [x], (0.001, 0), out_dtype="int16")
    with pytest.raises(ModelError, match="'x' \\(op #0 RELU\\) is int16"):
        to_float(g)


def test_per_channel_activation_is_a_model_error():
    x = Tensor("x", (1, 2, 2, 2), "int8", None, Quantization((0.1, 0.2), (0, 0), 3))
    g = quant_graph("RELU", [x], (0.1, 0))
    with pytest.raises(ModelError, match="activation 'x' .* 2 scales"):
        to_float(g)


def test_reshape_onto_another_grid_is_a_model_error():
    x = activation("x", (1, 2, 2, 3), 0.1, 0)
    shape = const("shape", np.array([1, 12], np.int32))
    g = quant_graph("RESHAPE", [x, shape], (0.2, 3), {"new_shape": (1, 12)})
    with pytest.raises(ModelError, match="op #0 RESHAPE copies integers onto another grid"):
        to_float(g)


def test_quantized_op_without_semantics_is_a_model_error():
    x = activation("x", (1, 4, 4, 3), 0.05, 0)
    g = quant_graph("L2_NORMALIZATION", [x], (1 / 128, 0), out_shape=(1, 4, 4, 3))
    with pytest.raises(ModelError, match="op #0 L2_NORMALIZATION.*no quantized"):
        to_float(g)


def test_fuse_quantize_keeps_a_quantize_without_epilogue_producer():
    """A QUANTIZE after an op whose kernels have no epilogue (a RESHAPE) stays an op."""
    x = Tensor("x", (1, 1, 1, 4), "float32")
    y = Tensor("y", (1, 4), "float32")
    z = Tensor("z", (1, 4), "float32", None, Quantization((0.1,), (0,), dtype="int8"))
    g = Graph([x, y, z], [Op("RESHAPE", (0,), (1,), {"new_shape": (1, 4)}),
                          Op("QUANTIZE", (1,), (2,))], [0], [2], "q")  # fmt: skip
    out, log = run_with_log(g)
    assert [op.type for op in out.ops] == ["RESHAPE", "QUANTIZE"]
    got = Interpreter(out).run({"x": np.array([[[[0.04, 0.06, -0.26, 20.0]]]], np.float32)})
    np.testing.assert_allclose(got["z"], [[0.0, 0.1, -0.3, 12.7]], rtol=1e-6)
