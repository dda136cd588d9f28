"""The converted fixtures (tests/data/quant) on the GPU engine vs LiteRT.

Tolerances (docs/quantization.md):
- fp32 / fp16-weight models: 1e-4 relative of LiteRT (measured <= 3e-7);
- full int8 (int8 or float I/O): within one quantization step of the output, of LiteRT's
  default (XNNPACK) and reference kernels alike (the float path rounds to the grid
  after every op; measured: at most 1 step at fp32, 2 at fp16);
- dynamic range: 1e-4 relative of the reference run on the dequantized weights (what
  the engine computes), 1e-2 of LiteRT, which quantizes the activations on the fly
  (measured <= 3e-3);
- at fp16: 2e-3 relative where fp32 has 1e-4.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from engine.errors import ModelError
from engine.gpu.engine import Engine
from engine.model.importer import load_tflite
from engine.reference import Interpreter
from engine.transforms.quantized import to_float
from tests.helpers.gpu import gpu_context
from tests.helpers.quant_models import fixture_input, litert_all
from tests.helpers.quant_ops import activation, const, quant_graph

pytest.importorskip("ai_edge_litert")
gpu_context()

DATA = Path(__file__).resolve().parents[1] / "data" / "quant"
FIXTURES = sorted(p.stem for p in DATA.glob("*.tflite"))


def _output_step(g) -> float:
    """The quantization step of the model's output (or of what its DEQUANTIZE reads)."""
    out = g.tensors[g.outputs[0]]
    q = out.quantization if out.dtype == "int8" else g.tensors[g.ops[-1].inputs[0]].quantization
    return float(np.float32(q.scale[0]))


def _check(name: str, precision: str = "fp32", transforms: bool = True) -> Engine:
    path = DATA / f"{name}.tflite"
    g = load_tflite(path)
    engine = Engine(g, precision=precision, transforms=transforms)
    assert engine.fallback_ops == []
    in_name, out = g.tensors[g.inputs[0]].name, g.tensors[g.outputs[0]]
    x = fixture_input(g, seed=3)
    got = engine.run({in_name: x})[out.name]
    assert got.dtype == np.dtype(out.dtype)
    for kind in ("default", "reference"):
        want = litert_all(path, x, kind)[out.name]
        diff = np.abs(got.astype(np.float64) - want).max()
        if "int8" in name:
            steps = diff if out.dtype == "int8" else diff / _output_step(g)
            assert steps <= (1 if precision == "fp32" else 2) + 1e-4, f"{kind}: {steps} steps"
        elif "dynamic" in name:
            assert diff <= 1e-2 * max(1.0, np.abs(want).max()), f"{kind}: {diff:.3g}"
        else:
            tol = 1e-4 if precision == "fp32" else 2e-3
            assert diff <= tol * max(1.0, np.abs(want).max()), f"{kind}: {diff:.3g}"
    if "dynamic" in name:  # what the engine computes: the float model of the weights
        ref = Interpreter(to_float(g)).run({in_name: x})[out.name]
        tol = 1e-4 if precision == "fp32" else 2e-3
        assert np.abs(got - ref).max() <= tol * max(1.0, np.abs(ref).max())
    return engine


@pytest.mark.parametrize("name", FIXTURES)
def test_fixture_fp32(name):
    _check(name)


@pytest.mark.parametrize("name", FIXTURES)
def test_fixture_fp16(name):
    _check(name, "fp16")


def test_int8_without_transforms_runs_quantize_ops():
    engine = _check("unet_int8", transforms=False)
    assert sum(op.type == "QUANTIZE" for op in engine.graph.ops) == 9


def test_int8_io_dtype_is_checked():
    g = load_tflite(DATA / "convnet_int8.tflite")
    engine = Engine(g)
    name = g.tensors[g.inputs[0]].name
    with pytest.raises(ValueError, match="expected int8"):
        engine.run({name: np.zeros(g.tensors[g.inputs[0]].shape, np.float32)})


def test_quantized_mean_over_channels_keeps_integer_semantics():
    """A MEAN over the channels (a GPU kernel since the reduce op) in its float form,
    rounded to its output grid: within one step of the integer reference."""
    x = activation("x", (1, 4, 5, 6), 0.05, -3)
    g = quant_graph("MEAN", [x, const("axes", np.array([3], np.int32))], (0.02, 7),
                    {"keep_dims": True})  # fmt: skip
    engine = Engine(g)
    feed = {"x": np.random.default_rng(4).integers(-128, 128, (1, 4, 5, 6)).astype(np.int8)}
    got, want = engine.run(feed)["output"], Interpreter(g).run(feed)["output"]
    assert got.dtype == np.int8
    assert np.abs(got.astype(int) - want).max() <= 1


def test_quantized_cpu_fallback_keeps_integer_semantics():
    """PACK has no GPU kernel: it runs on the CPU in its float form, exactly the integer
    reference's values (a data move on one grid), returned as int8."""
    a, b = activation("a", (4, 6), 0.05, -3), activation("b", (4, 6), 0.05, -3)
    g = quant_graph("PACK", [a, b], (0.05, -3), {"axis": 0, "values_count": 2},
                    out_shape=(2, 4, 6))  # fmt: skip
    engine = Engine(g)
    assert engine.fallback_ops == ["#0 PACK"]
    rng = np.random.default_rng(4)
    feed = {n: rng.integers(-128, 128, (4, 6)).astype(np.int8) for n in ("a", "b")}
    got, want = engine.run(feed)["output"], Interpreter(g).run(feed)["output"]
    assert got.dtype == np.int8
    np.testing.assert_array_equal(got, want)


def test_unsupported_quantized_op_is_a_model_error_at_load():
    x = activation("x", (1, 4, 4, 3), 0.05, 0)
    g = quant_graph("L2_NORMALIZATION", [x], (1 / 128, 0), out_shape=(1, 4, 4, 3))
    with pytest.raises(ModelError, match="op #0 L2_NORMALIZATION"):
        Engine(g)
