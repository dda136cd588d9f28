"""QUANTIZE and DEQUANTIZE, in integer graphs and in fake-quant float graphs.

Integer graphs (quantize.cc, dequantize.cc):
- QUANTIZE float -> int: q = round(x / scale) + zero_point (float32 division, halves
  away from zero), clamped to the type's range;
- QUANTIZE int -> int (requantize): MultiplyByQuantizedMultiplier(q - z_in, s_in / s_out)
  + z_out, clamped;
- DEQUANTIZE int -> float: scale * (q - zero_point) in double, rounded once to float32.
Fake-quant float graphs (engine/transforms/quantized.py: real values in float
tensors that keep their quantization):
- QUANTIZE float -> float: x rounded to the output's grid, fake_quant();
- DEQUANTIZE float -> float: the values are already real: a copy.
"""

from __future__ import annotations

import numpy as np

from engine.errors import ModelError
from engine.model.ir import Op, Quantization
from engine.reference.quantized import OpTensors, register_quantized
from engine.reference.quantized.fixed_point import (
    INT_RANGES,
    multiply_by_quantized_multiplier,
    quantize_multiplier,
    round_half_away,
    saturate,
)
from engine.reference.quantized.params import dequantize, per_tensor


def fake_quant(x: np.ndarray, q: Quantization, dtype: str = "int8") -> np.ndarray:
    """x rounded to the grid of `q` and clamped to `dtype`'s range, as real values
    (QUANTIZE then DEQUANTIZE); keeps x's float dtype."""
    if len(q.scale) != 1:
        raise ModelError(f"fake quantization needs one scale, got {len(q.scale)}")
    scale, zero = np.float32(q.scale[0]), int(q.zero_point[0])
    qmin, qmax = INT_RANGES[dtype]
    levels = np.clip(round_half_away(x.astype(np.float32) / scale) + zero, qmin, qmax)
    return ((levels - zero) * np.float64(scale)).astype(x.dtype)


def _is_int(dtype: str) -> bool:
    return np.dtype(dtype).kind in "iu"


@register_quantized("QUANTIZE")
def quantize(op: Op, inputs: list, ts: OpTensors) -> list:
    src, dst = ts.inputs[0], ts.outputs[0]
    x = np.asarray(inputs[0])
    if not _is_int(dst.dtype):
        if dst.quantization is None:
            raise ModelError(f"QUANTIZE to {dst.dtype} {dst.name!r} without parameters")
        return [fake_quant(x, dst.quantization, dst.quantization.dtype or "int8")]
    scale, zero = per_tensor(dst)
    if not _is_int(src.dtype):
        q = round_half_away(x.astype(np.float32) / scale) + zero
        return [saturate(q, dst.dtype)]
    s_in, z_in = per_tensor(src)
    m, shift = quantize_multiplier(float(np.float64(s_in) / np.float64(scale)))
    q = multiply_by_quantized_multiplier(x.astype(np.int64) - z_in, m, shift) + zero
    return [saturate(q, dst.dtype)]


@register_quantized("DEQUANTIZE")
def dequantize_op(op: Op, inputs: list, ts: OpTensors) -> list:
    src = ts.inputs[0]
    x = np.asarray(inputs[0])
    if not _is_int(src.dtype):  # fake-quant graph (or float16): already real values
        return [x.astype(np.result_type(x.dtype, np.float32))]
    if src.quantization is None:
        raise ModelError(f"DEQUANTIZE of {src.dtype} {src.name!r} without parameters")
    return [dequantize(x, src)]
