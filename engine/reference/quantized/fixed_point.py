"""TFLite's integer arithmetic, vectorised over numpy int64 arrays.

From tensorflow/lite/kernels/internal/common.h and quantization_util.cc (the
default double-rounding build, TFLITE_SINGLE_ROUNDING off):
- quantize_multiplier(m): m = q * 2^shift with q an int32 in [2^30, 2^31) (Q31);
- multiply_by_quantized_multiplier(x, q, shift): x * m rounded: a rounding doubling
  high multiply (gemmlowp's SaturatingRoundingDoublingHighMul) then a rounding right
  shift (RoundingDivideByPOT), both rounding half away from zero;
- round_half_away: TfLiteRound (std::round) on float32 values;
- activation_range: CalculateActivationRangeQuantized, the fused activation's clamp
  (engine/model/elementwise.py FUSED) as an integer clamp on the output's grid.
"""

from __future__ import annotations

import math

import numpy as np

from engine.errors import ModelError
from engine.model.elementwise import FUSED

INT_RANGES = {"int8": (-128, 127), "uint8": (0, 255), "int16": (-32768, 32767)}


def quantize_multiplier(m: float) -> tuple[int, int]:
    """(Q31 multiplier, shift) with m ~= multiplier * 2^(shift - 31) (QuantizeMultiplier)."""
    if m == 0.0:
        return 0, 0
    q, shift = math.frexp(m)
    fixed = int(round_half_away_scalar(q * (1 << 31)))
    if fixed == 1 << 31:
        fixed //= 2
        shift += 1
    if shift < -31:  # every bit shifted out: the result is 0
        return 0, 0
    return fixed, shift


def round_half_away_scalar(x: float) -> float:
    return math.copysign(math.floor(abs(x) + 0.5), x)


def _high_mul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """SaturatingRoundingDoublingHighMul: (a * b * 2 + 2^31 rounding) >> 32, saturated."""
    a, b = np.asarray(a, np.int64), np.asarray(b, np.int64)
    ab = a * b
    nudge = np.where(ab >= 0, 1 << 30, 1 - (1 << 30))
    total = ab + nudge
    # C integer division truncates toward zero.
    high = np.where(total >= 0, total >> 31, -((-total) >> 31))
    overflow = (a == b) & (a == -(1 << 31))
    return np.where(overflow, (1 << 31) - 1, high)


def _rounding_shift(x: np.ndarray, exponent: np.ndarray | int) -> np.ndarray:
    """RoundingDivideByPOT: x / 2^exponent rounded half away from zero."""
    x = np.asarray(x, np.int64)
    exponent = np.asarray(exponent, np.int64)
    mask = (np.int64(1) << exponent) - 1
    remainder = x & mask
    threshold = (mask >> 1) + (x < 0)
    return (x >> exponent) + (remainder > threshold)


def multiply_by_quantized_multiplier(
    x: np.ndarray, multiplier: np.ndarray | int, shift: np.ndarray | int
) -> np.ndarray:
    """MultiplyByQuantizedMultiplier (int32 in, int32 out; arrays broadcast)."""
    shift = np.asarray(shift, np.int64)
    left = np.maximum(shift, 0)
    right = np.maximum(-shift, 0)
    x = np.asarray(x, np.int64) * (np.int64(1) << left)
    x = ((x + (1 << 31)) % (1 << 32)) - (1 << 31)  # int32 wrap, as in C
    return _rounding_shift(_high_mul(x, multiplier), right)


def multiply_single_rounding(
    x: np.ndarray, multiplier: np.ndarray | int, shift: np.ndarray | int
) -> np.ndarray:
    """x * multiplier * 2^(shift - 31) rounded once, halves up: (x * m + 2^(t-1)) >> t
    in 64 bits (ruy's rounding; LiteRT's int8 FULLY_CONNECTED matches this, measured
    against its BUILTIN_REF kernels, while its convolutions match the double rounding)."""
    total = 31 - np.asarray(shift, np.int64)
    x = np.asarray(x, np.int64) * np.asarray(multiplier, np.int64)
    return (x + (np.int64(1) << (total - 1))) >> total


def multiply_smaller_than_one(x: np.ndarray, multiplier: int, shift: int) -> np.ndarray:
    """MultiplyByQuantizedMultiplierSmallerThanOneExp (shift <= 0)."""
    return _rounding_shift(_high_mul(x, multiplier), -shift)


def round_half_away(x: np.ndarray) -> np.ndarray:
    """TfLiteRound on float values: halves go away from zero."""
    return np.copysign(np.floor(np.abs(x) + 0.5), x)


def activation_range(activation: str, scale: float, zero_point: int, dtype: str) -> tuple[int, int]:
    """The integer clamp of a fused activation on an output grid (scale, zero point)."""
    qmin, qmax = INT_RANGES[dtype]
    s = np.float32(scale)

    def quantize(f: float) -> int:
        return zero_point + int(round_half_away(np.float32(f) / s))

    if activation not in FUSED:
        raise ModelError(f"unknown fused activation {activation!r}")
    bounds = FUSED[activation]
    if bounds is None:
        return qmin, qmax
    lo, hi = bounds
    return (max(qmin, quantize(lo)) if math.isfinite(lo) else qmin,
            min(qmax, quantize(hi)) if math.isfinite(hi) else qmax)  # fmt: skip


def saturate(x: np.ndarray, dtype: str, lo: int | None = None, hi: int | None = None) -> np.ndarray:
    """Clamp to [lo, hi] (default: the dtype's range) and cast to `dtype`."""
    qmin, qmax = INT_RANGES[dtype]
    lo = qmin if lo is None else lo
    hi = qmax if hi is None else hi
    return np.clip(x, lo, hi).astype(dtype)
