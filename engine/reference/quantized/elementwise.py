"""Integer element-wise ops.

- ADD / SUB (add.cc, sub.cc): both inputs rescaled to 2 * max(input scales) with a
  20-bit left shift, added, rescaled to the output grid (fixed point throughout);
- MUL (mul.cc): (x1 - z1) * (x2 - z2) times s1 * s2 / s_out;
- MAXIMUM / MINIMUM: on the integers (LiteRT requires one grid for all three);
- HARD_SWISH: LiteRT's int16 fixed-point formula (reference_ops::HardSwish);
- RELU, RELU6, RELU_N1_TO_1 (activations.cc ReluX): (x - z_in) times s_in / s_out in
  fixed point, + z_out, clamped to the activation's integer bounds; LEAKY_RELU
  (reference_ops::QuantizeLeakyRelu): the same with s_in * alpha / s_out below zero. A
  float table differs from these by one step where the rescale meets a tie (negative
  halves go up in the fixed-point rounding) and for LEAKY_RELU's alpha (measured
  against LiteRT on every int8 value: tests/reference/test_quantized.py);
- the element-wise table's other activations (engine/model/elementwise.py, quantized
  "lookup": LOGISTIC, TANH, ELU) and
  SOFTMAX: through a float lookup over the input grid, as LiteRT's optimized int8
  kernels build theirs: dequantize, apply in float32, q = round(y / s_out) + z_out.
  (LiteRT's BUILTIN_REF kernels use fixed-point approximations of exp instead and
  may differ from this by one step; tests bound it so.)
"""

from __future__ import annotations

import numpy as np

from engine.errors import ModelError
from engine.model.elementwise import UNARY
from engine.model.ir import Op
from engine.reference import softmax as float_softmax
from engine.reference.quantized import OpTensors, register_quantized
from engine.reference.quantized.fixed_point import (
    activation_range,
    multiply_by_quantized_multiplier,
    multiply_smaller_than_one,
    quantize_multiplier,
    round_half_away,
    saturate,
)
from engine.reference.quantized.params import per_tensor

LEFT_SHIFT = 20  # add.cc: int8 inputs are shifted left 20 bits before rescaling


def _grids(ts: OpTensors):
    (s1, z1), (s2, z2) = per_tensor(ts.inputs[0]), per_tensor(ts.inputs[1])
    return s1, z1, s2, z2, *per_tensor(ts.outputs[0])


@register_quantized("ADD", "SUB")
def add_sub(op: Op, inputs: list, ts: OpTensors) -> list:
    a, b = (np.asarray(v, np.int64) for v in inputs[:2])
    s1, z1, s2, z2, so, zo = _grids(ts)
    twice_max = np.float64(2 * max(s1, s2))  # float32 doubling, as in the C++
    m1, sh1 = quantize_multiplier(float(np.float64(s1) / twice_max))
    m2, sh2 = quantize_multiplier(float(np.float64(s2) / twice_max))
    mo, sho = quantize_multiplier(float(twice_max / np.float64(np.float32((1 << LEFT_SHIFT) * so))))
    x1 = multiply_smaller_than_one((a - z1) << LEFT_SHIFT, m1, sh1)
    x2 = multiply_smaller_than_one((b - z2) << LEFT_SHIFT, m2, sh2)
    raw = x1 + x2 if op.type == "ADD" else x1 - x2
    y = multiply_smaller_than_one(raw, mo, sho) + zo
    return [_clamp(y, op, ts)]


@register_quantized("MUL")
def mul(op: Op, inputs: list, ts: OpTensors) -> list:
    a, b = (np.asarray(v, np.int64) for v in inputs[:2])
    s1, z1, s2, z2, so, zo = _grids(ts)
    m, shift = quantize_multiplier(float(np.float64(s1) * np.float64(s2) / np.float64(so)))
    y = multiply_by_quantized_multiplier((a - z1) * (b - z2), m, shift) + zo
    return [_clamp(y, op, ts)]


@register_quantized("MAXIMUM", "MINIMUM")
def max_min(op: Op, inputs: list, ts: OpTensors) -> list:
    for t in ts.inputs[:2]:
        if per_tensor(t) != per_tensor(ts.outputs[0]):
            raise ModelError(f"{op.type}: inputs and output must share one quantization grid")
    fn = np.maximum if op.type == "MAXIMUM" else np.minimum
    return [fn(inputs[0], inputs[1]).astype(ts.outputs[0].dtype)]


def _clamp(y: np.ndarray, op: Op, ts: OpTensors) -> np.ndarray:
    out = ts.outputs[0]
    scale, zero = per_tensor(out)
    lo, hi = activation_range(op.attrs.get("fused_activation_function", "NONE"), scale, zero,
                              out.dtype)  # fmt: skip
    return saturate(y, out.dtype, lo, hi)


def lookup(op: Op, x: np.ndarray, ts: OpTensors, fn) -> np.ndarray:
    """y = fn(dequantized x) requantized, through a table over every input value."""
    s_in, z_in = per_tensor(ts.inputs[0])
    s_out, z_out = per_tensor(ts.outputs[0])
    levels = np.arange(*_range(ts.inputs[0].dtype), dtype=np.int64)
    real = (s_in * (levels - z_in).astype(np.float32)).astype(np.float32)
    y = np.asarray(fn(real), np.float32)
    q = round_half_away(y * (np.float32(1) / s_out)) + z_out
    table = saturate(q, ts.outputs[0].dtype)
    return table[np.asarray(x, np.int64) - levels[0]]


def _range(dtype: str) -> tuple[int, int]:
    return (-128, 128) if dtype == "int8" else (0, 256)


@register_quantized(*(name for name, u in UNARY.items() if u.quantized == "lookup"))
def activation(op: Op, inputs: list, ts: OpTensors) -> list:
    return [lookup(op, inputs[0], ts, lambda v: UNARY[op.type].numpy(v, op.attrs))]


def _rescale(x: np.ndarray, s_in, s_out, factor: float = 1.0) -> np.ndarray:
    """x (already minus the input zero point) times float32(s_in * factor / s_out), in
    fixed point (QuantizeMultiplier + MultiplyByQuantizedMultiplier)."""
    real = np.float32(np.float32(s_in) * np.float32(factor)) / np.float32(s_out)
    m, shift = quantize_multiplier(float(real))
    return multiply_by_quantized_multiplier(x, m, shift)


@register_quantized("RELU", "RELU6", "RELU_N1_TO_1")
def relu_x(op: Op, inputs: list, ts: OpTensors) -> list:
    out = ts.outputs[0]
    (s_in, z_in), (s_out, z_out) = per_tensor(ts.inputs[0]), per_tensor(out)
    y = _rescale(np.asarray(inputs[0], np.int64) - z_in, s_in, s_out) + z_out
    lo, hi = activation_range(op.type, s_out, z_out, out.dtype)
    return [saturate(y, out.dtype, lo, hi)]


@register_quantized("LEAKY_RELU")
def leaky_relu(op: Op, inputs: list, ts: OpTensors) -> list:
    out = ts.outputs[0]
    (s_in, z_in), (s_out, z_out) = per_tensor(ts.inputs[0]), per_tensor(out)
    x = np.asarray(inputs[0], np.int64) - z_in
    alpha = float(np.float32(op.attrs.get("alpha", 0.2)))
    y = np.where(x >= 0, _rescale(x, s_in, s_out), _rescale(x, s_in, s_out, alpha)) + z_out
    return [saturate(y, out.dtype)]


def _high_mul_16(a: np.ndarray, b: int, rounding: bool = True) -> np.ndarray:
    """gemmlowp's int16 (Saturating)(Rounding)DoublingHighMul."""
    ab = a.astype(np.int64) * b
    if rounding:
        ab = ab + np.where(ab >= 0, 1 << 14, 1 - (1 << 14))
    high = np.where(ab >= 0, ab >> 15, -((-ab) >> 15))  # C division truncates
    return np.where((a == b) & (a == -(1 << 15)), (1 << 15) - 1, high)


def _shift_16(x: np.ndarray, exponent: int) -> np.ndarray:
    """RoundingDivideByPOT on int16 values (halves away from zero)."""
    mask = (1 << exponent) - 1
    return (x >> exponent) + ((x & mask) > (mask >> 1) + (x < 0))


def _saturating_left_shift_16(x: np.ndarray, amount: int) -> np.ndarray:
    return np.clip(x * (1 << amount), -(1 << 15), (1 << 15) - 1)


def _int16_multiplier(m: float) -> tuple[int, int]:
    """QuantizeMultiplier then DownScaleInt32ToInt16Multiplier: (Q15 multiplier, exponent)."""
    q, exponent = quantize_multiplier(m)
    return (min(32767, (q + (1 << 15)) >> 16) if q < (1 << 31) - 1 - (1 << 15) else 32767), exponent


@register_quantized("HARD_SWISH")
def hard_swish(op: Op, inputs: list, ts: OpTensors) -> list:
    """reference_ops::HardSwish in int16 fixed point (LiteRT's reference and optimized
    int8 kernels both compute this, not a float table): x on a 2^7 finer grid, a
    "relu-ish" factor in [0, 1] from x / 3, their product shifted to the output grid."""
    s_in, z_in = per_tensor(ts.inputs[0])
    s_out, z_out = per_tensor(ts.outputs[0])
    hires = np.float32(s_in) * np.float32(1.0 / 128.0)
    out_mult, out_exp = _int16_multiplier(float(np.float32(hires / np.float32(s_out))))
    relu_mult, relu_exp = _int16_multiplier(float(np.float32(hires / np.float32(3.0 / 32768.0))))
    levels = np.arange(*_range(ts.inputs[0].dtype), dtype=np.int64)
    x = (levels - z_in) * (1 << 7)  # int16: |x - z| <= 255, times 128 fits
    pre_out = _high_mul_16(x, out_mult)
    relu = _saturating_left_shift_16(x, relu_exp - 1) if relu_exp > 0 else x
    relu = _high_mul_16(relu, relu_mult)
    if relu_exp > 0:
        relu = _saturating_left_shift_16(relu, 1)
    elif relu_exp < 0:
        relu = _shift_16(relu, -relu_exp)
    relu = (relu + (1 << 15)) >> 1
    y = _shift_16(_high_mul_16(relu, pre_out, rounding=False), -out_exp) + z_out
    table = saturate(y, ts.outputs[0].dtype)
    return [table[np.asarray(inputs[0], np.int64) - levels[0]]]


@register_quantized("SOFTMAX")
def softmax(op: Op, inputs: list, ts: OpTensors) -> list:
    """Dequantize, float softmax over the last axis, requantize (optimized_ops::Softmax
    builds the same from a float exp table)."""
    s_in, z_in = per_tensor(ts.inputs[0])
    s_out, z_out = per_tensor(ts.outputs[0])
    real = (s_in * (np.asarray(inputs[0], np.int64) - z_in).astype(np.float32)).astype(np.float32)
    y = float_softmax.softmax(op, [real])[0]
    q = round_half_away(y.astype(np.float32) * (np.float32(1) / s_out)) + z_out
    return [saturate(q, ts.outputs[0].dtype)]
