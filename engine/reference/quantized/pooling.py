"""Integer pooling: AVERAGE_POOL_2D, MAX_POOL_2D, MEAN.

- AVERAGE_POOL_2D (reference_integer_ops::AveragePool): the sum of the in-bounds
  taps divided by their count, rounded half away from zero; one grid in and out;
- MAX_POOL_2D: the max of the in-bounds taps; one grid in and out;
- MEAN (reduce.cc, reference_ops::QuantizedMeanOrSum): the integer sum over the axes
  minus n * z_in, times s_in / (n * s_out) as one fixed-point multiplier, + z_out.
All clamp to the fused activation's integer range.
"""

from __future__ import annotations

import numpy as np

from engine.errors import ModelError
from engine.model.ir import Op
from engine.reference.padding import windows
from engine.reference.pooling import window_args
from engine.reference.quantized import OpTensors, register_quantized
from engine.reference.quantized.fixed_point import (
    activation_range,
    multiply_by_quantized_multiplier,
    quantize_multiplier,
    saturate,
)
from engine.reference.quantized.params import per_tensor
from engine.reference.registry import const_ints


def _one_grid(op: Op, ts: OpTensors) -> tuple[np.float32, int]:
    grid = per_tensor(ts.inputs[0])
    if grid != per_tensor(ts.outputs[0]):
        raise ModelError(f"{op.type}: input and output must share one quantization grid")
    return grid


def _act_clamp(y: np.ndarray, op: Op, ts: OpTensors) -> np.ndarray:
    out = ts.outputs[0]
    scale, zero = per_tensor(out)
    act = op.attrs.get("fused_activation_function", "NONE")
    return saturate(y, out.dtype, *activation_range(act, scale, zero, out.dtype))


@register_quantized("AVERAGE_POOL_2D")
def average_pool_2d(op: Op, inputs: list, ts: OpTensors) -> list:
    _one_grid(op, ts)
    x = np.asarray(inputs[0], np.int64)
    args = window_args(op)
    total = windows(x, *args).sum(axis=(3, 4))
    count = windows(np.ones((1, *x.shape[1:3], 1), np.int64), *args).sum(axis=(3, 4))
    # (acc +- count / 2) / count with C's truncating division: rounds half away from 0.
    half = count // 2
    y = np.where(total > 0, (total + half) // count, -((-total + half) // count))
    return [_act_clamp(y, op, ts)]


@register_quantized("MAX_POOL_2D")
def max_pool_2d(op: Op, inputs: list, ts: OpTensors) -> list:
    _one_grid(op, ts)
    x = np.asarray(inputs[0], np.int64)
    y = windows(x, *window_args(op), fill=np.iinfo(np.int64).min).max(axis=(3, 4))
    return [_act_clamp(y, op, ts)]


@register_quantized("MEAN")
def mean(op: Op, inputs: list, ts: OpTensors) -> list:
    x = np.asarray(inputs[0], np.int64)
    axes = sorted({a % x.ndim for a in const_ints(inputs[1], "axes", op)})
    keep = bool(op.attrs.get("keep_dims", False))
    total = x.sum(axis=tuple(axes), keepdims=keep)
    n = int(np.prod([x.shape[a] for a in axes]))
    s_in, z_in = per_tensor(ts.inputs[0])
    s_out, z_out = per_tensor(ts.outputs[0])
    mult, shift = quantize_multiplier(float(np.float64(s_in) / np.float64(s_out)))
    # Fold 1/n into the multiplier: scale it up by 2^k (k = floor(log2 n), capped so
    # the shift stays valid), divide by n, shift back.
    k = min(n.bit_length() - 1, 32, 31 + shift)
    mult, shift = (mult << k) // n, shift - k
    y = multiply_by_quantized_multiplier(total - z_in * n, mult, shift) + z_out
    return [saturate(y, ts.outputs[0].dtype)]
