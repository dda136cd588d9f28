"""The converted fixtures (tests/data/quant) on the reference interpreter vs LiteRT.

- every op, fed LiteRT's inputs, equals LiteRT's reference kernels (BUILTIN_REF):
  integer outputs bit for bit, float outputs (hybrid ops included) to float32 rounding;
- full int8 (int8 or float I/O): outputs within one step of LiteRT's default kernels
  (XNNPACK rounds its requantization differently);
- dynamic range: outputs within 1e-3 of the default kernels (XNNPACK quantizes the
  activations its own way);
- fp32 / fp16: outputs within 1e-5 relative.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from engine.model.importer import load_tflite
from engine.model.ir import Graph
from engine.reference import Interpreter
from tests.helpers.quant_models import fixture_input, litert_all

pytest.importorskip("ai_edge_litert")

DATA = Path(__file__).resolve().parents[1] / "data" / "quant"
FIXTURES = sorted(p.stem for p in DATA.glob("*.tflite"))


def output_step(graph) -> float | None:
    q = graph.tensors[graph.outputs[0]].quantization
    return float(q.scale[0]) if graph.tensors[graph.outputs[0]].dtype == "int8" else None


def one_op(graph: Graph, i: int) -> Graph:
    """Op #i alone, its non-constant inputs as graph inputs."""
    op = graph.ops[i]
    inputs = [t for t in dict.fromkeys(op.inputs) if t >= 0 and not graph.tensors[t].is_constant]
    return Graph(graph.tensors, [op], inputs, list(op.outputs), f"{graph.name}#{i}")


@pytest.mark.parametrize("name", FIXTURES)
def test_every_op_matches_litert_reference(name):
    """Each op, fed LiteRT's own inputs, gives LiteRT's output: integer ops bit for bit,
    float and hybrid ops to float32 rounding. (Op by op, because a one-ulp float
    difference upstream can move a hybrid op's on-the-fly quantization by one level.)"""
    path = DATA / f"{name}.tflite"
    g = load_tflite(path)
    want = litert_all(path, fixture_input(g), "reference")
    for i, op in enumerate(g.ops):
        sub = one_op(g, i)
        got = Interpreter(sub).run({g.tensors[t].name: want[g.tensors[t].name] for t in sub.inputs})
        for t in op.outputs:
            tensor = g.tensors[t]
            out, ref = got[tensor.name], want[tensor.name]
            assert out.dtype == ref.dtype, (i, op.type)
            if np.dtype(ref.dtype).kind == "i":
                np.testing.assert_array_equal(out, ref, err_msg=f"op #{i} {op.type}")
            else:
                err = np.abs(out.astype(np.float64) - ref).max() / max(1.0, np.abs(ref).max())
                assert err <= 1e-5, f"op #{i} {op.type}: {err:.3g}"


@pytest.mark.parametrize("name", FIXTURES)
def test_outputs_near_litert_default(name):
    path = DATA / f"{name}.tflite"
    g = load_tflite(path)
    x = fixture_input(g, seed=1)
    got = Interpreter(g).run({g.tensors[g.inputs[0]].name: x})
    want = litert_all(path, x, "default")
    for k, ref in want.items():
        diff = np.abs(got[k].astype(np.float64) - ref.astype(np.float64)).max()
        if ref.dtype == np.int8:
            assert diff <= 1, f"{k}: {diff} steps"
        elif "int8" in name:  # float output of a full-int8 model: one output step
            step = g.tensors[g.ops[-1].inputs[0]].quantization.scale[0]
            assert diff <= step * 1.0001, f"{k}: {diff / step:.2f} steps"
        else:
            tol = 1e-3 if "dynamic" in name else 1e-5
            assert diff <= tol * max(1.0, np.abs(ref).max()), f"{k}: {diff:.3g}"
