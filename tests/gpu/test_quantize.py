"""QUANTIZE / DEQUANTIZE kernels and the fake-quant epilogue step vs the reference.

Graphs here are already in float form (engine/transforms/quantized.py): real values
in float32 tensors that keep their int8/uint8 grid. Random inputs avoid rounding ties on
grids like 0.05 (the GPU divides to within a few ulps, which could flip a tie) but go past
the range so the clamps are exercised; ties are checked on power-of-two grids, where the
division is exact.
"""

from __future__ import annotations

import numpy as np
import pytest

from engine.model.ir import Graph, Op, Quantization, Tensor
from tests.helpers.gpu import STORAGES, assert_matches, conv_attrs, gpu_context, run_both

gpu_context()

INT8 = Quantization((0.05,), (-3,), dtype="int8")
UINT8 = Quantization((0.02,), (128,), dtype="uint8")


def _off_ties(rng, shape, grid: Quantization, spread: float = 1.5) -> np.ndarray:
    """Values k * scale + u * scale with |u| <= 0.4, k over `spread` x the range."""
    lo, hi = (-128, 127) if grid.dtype == "int8" else (0, 255)
    z, s = grid.zero_point[0], grid.scale[0]
    k = rng.integers(int((lo - z) * spread), int((hi - z) * spread), shape)
    return ((k + rng.uniform(-0.4, 0.4, shape)) * s).astype(np.float32)


def _graph(op_type: str, src_q, dst_q, shape=(1, 5, 7, 6)) -> Graph:
    x = Tensor("x", shape, "float32", None, src_q)
    y = Tensor("y", shape, "float32", None, dst_q)
    return Graph([x, y], [Op(op_type, (0,), (1,))], [0], [1], op_type)


@pytest.mark.parametrize("storage", STORAGES)
@pytest.mark.parametrize("precision", ["fp32", "fp16"])
@pytest.mark.parametrize("grid", [INT8, UINT8], ids=["int8", "uint8"])
def test_quantize(grid, precision, storage):
    rng = np.random.default_rng(0)
    g = _graph("QUANTIZE", None, grid)
    x = _off_ties(rng, (1, 5, 7, 6), grid)
    engine = assert_matches(g, {"x": x}, precision=precision, storage=storage)
    assert "quantize" in [d.kernel for d in engine.program.dispatches]


# Grids with power-of-two scales: x / scale is exact on the GPU too, so ties are ties.
TIE_GRIDS = [Quantization((1 / 16,), (-3,), dtype="int8"),
             Quantization((1 / 64,), (128,), dtype="uint8")]  # fmt: skip


@pytest.mark.parametrize("storage", STORAGES)
@pytest.mark.parametrize("grid", TIE_GRIDS, ids=["int8", "uint8"])
def test_quantize_rounds_ties_away_from_zero(grid, storage):
    """Every value halfway between two levels, both signs, past the range: the GPU rounds
    them as TFLite's QUANTIZE (half away from zero), i.e. as the reference. fp32 only:
    fp16 storage cannot hold these halves exactly (the input is rounded first)."""
    lo, hi = (-128, 127) if grid.dtype == "int8" else (0, 255)
    z, s = grid.zero_point[0], grid.scale[0]
    k = np.arange(lo - z - 20, hi - z + 20)  # levels around zero, 20 past each end
    x = ((k + 0.5) * s).astype(np.float32)
    x = np.concatenate([x, -x, ((k - 0.5) * s).astype(np.float32)])
    x = np.pad(x, (0, 6 * 7 * 30 - x.size)).reshape(1, 6, 7, 30)
    g = _graph("QUANTIZE", None, grid, x.shape)
    got, want, engine = run_both(g, {"x": x}, storage=storage)
    assert "quantize" in [d.kernel for d in engine.program.dispatches]
    np.testing.assert_array_equal(got["y"], want["y"])
    halves = np.abs(x / np.float32(s) - np.trunc(x / np.float32(s))) == 0.5
    assert halves.sum() > 600  # the cases are ties indeed
    level = np.round(want["y"] / np.float32(s))
    away = np.sign(x) * np.floor(np.abs(x / np.float32(s)) + 0.5)
    inside = halves & (away + z >= lo) & (away + z <= hi)
    np.testing.assert_array_equal(level[inside], away[inside])  # the reference: away too


@pytest.mark.parametrize("storage", STORAGES)
def test_requantize_and_dequantize(storage):
    """QUANTIZE between two grids, DEQUANTIZE of values on a grid (an identity)."""
    rng = np.random.default_rng(1)
    levels = rng.integers(-128, 128, (1, 4, 4, 9)) + 3  # q - zero point, on INT8's grid
    x = levels.astype(np.float32) * np.float32(0.05)
    assert_matches(_graph("QUANTIZE", INT8, UINT8, (1, 4, 4, 9)), {"x": x}, storage=storage)
    g = _graph("DEQUANTIZE", INT8, None, (1, 4, 4, 9))
    engine = assert_matches(g, {"x": x}, storage=storage)
    np.testing.assert_array_equal(engine.run({"x": x})["y"], x)


@pytest.mark.parametrize("act", ["NONE", "RELU6"])
def test_conv_with_fake_quant_epilogue(act):
    """CONV_2D then QUANTIZE: fuse_quantize makes the rounding the conv's epilogue."""
    rng = np.random.default_rng(2)
    w = rng.uniform(-0.5, 0.5, (8, 3, 3, 5)).astype(np.float32)
    b = rng.uniform(-0.5, 0.5, 8).astype(np.float32)
    tensors = [Tensor("x", (1, 6, 6, 5), "float32"), Tensor("w", w.shape, "float32", w),
               Tensor("b", (8,), "float32", b), Tensor("raw", (1, 6, 6, 8), "float32"),
               Tensor("y", (1, 6, 6, 8), "float32", None, Quantization((0.07,), (5,), dtype="int8"))]  # fmt: skip
    ops = [Op("CONV_2D", (0, 1, 2), (3,), conv_attrs(act=act)), Op("QUANTIZE", (3,), (4,))]
    g = Graph(tensors, ops, [0], [4], "conv+quant")
    x = rng.uniform(-1, 1, (1, 6, 6, 5)).astype(np.float32)
    engine = assert_matches(g, {"x": x}, transforms=True)
    assert [op.type for op in engine.graph.ops] == ["CONV_2D"]
    assert engine.graph.ops[0].attrs["epilogue"][-1][0] == "quant"
    y = engine.run({"x": x})["y"]
    levels = y / np.float32(0.07) + 5
    np.testing.assert_allclose(levels, np.round(levels), atol=1e-3)  # on the grid
    assert levels.max() <= 127 and levels.min() >= -128
