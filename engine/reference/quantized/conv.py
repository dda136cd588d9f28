"""Integer convolutions: CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED, TRANSPOSE_CONV.

As reference_integer_ops::ConvPerChannel / DepthwiseConvPerChannel / FullyConnected
(PerChannel) / TransposeConv compute them:
1. acc[c] = sum over taps of (x - input_zero_point) * w (int32; padded taps add 0)
   + bias[c] (int32, scale input_scale * weight_scale[c]);
2. acc = MultiplyByQuantizedMultiplier(acc, M[c]) with M[c] = input_scale *
   weight_scale[c] / output_scale (QuantizeMultiplier in double); rounded twice
   (gemmlowp) for the convolutions, once for FULLY_CONNECTED, as LiteRT does;
3. + output_zero_point, clamped to the fused activation's integer range.
The sums of step 1 reuse the float kernels on float64 copies of the integers:
every product and partial sum is an integer far below 2^53, so they are exact.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from engine.errors import ModelError
from engine.model.ir import Op
from engine.reference import conv as float_conv
from engine.reference.quantized import OpTensors, register_quantized
from engine.reference.quantized.fixed_point import (
    activation_range,
    multiply_by_quantized_multiplier,
    multiply_single_rounding,
    quantize_multiplier,
    saturate,
)
from engine.reference.quantized.params import channel_scales, per_tensor


def requantize_channels(
    acc: np.ndarray, in_scale: float, w_scales: np.ndarray, out_scale: float, single=False
) -> np.ndarray:
    """acc (int, channels last) times in_scale * w_scale[c] / out_scale, TFLite's rounding
    (`single`: rounded once, as LiteRT's FULLY_CONNECTED)."""
    pairs = [
        quantize_multiplier(float(np.float64(in_scale) * np.float64(s) / np.float64(out_scale)))
        for s in w_scales
    ]
    mult = np.array([p[0] for p in pairs], np.int64)
    shift = np.array([p[1] for p in pairs], np.int64)
    if single:
        return multiply_single_rounding(acc, mult, shift)
    return multiply_by_quantized_multiplier(acc, mult, shift)


def integer_sums(fn, op: Op, inputs: list, x: np.ndarray, w: np.ndarray, x_index: int):
    """Exact int64 sums of float kernel `fn` with its data input (`x_index`) replaced by
    `x` and its weights (input 1) by `w`: no bias, no fused activation."""
    args = list(inputs[: max(x_index, 1) + 1])
    args[x_index], args[1] = x.astype(np.float64), w.astype(np.float64)
    plain = replace(op, attrs={**op.attrs, "fused_activation_function": "NONE"})
    return np.rint(fn(plain, args)[0]).astype(np.int64)


def _finish(acc, bias, ts: OpTensors, op: Op, w_scales: np.ndarray) -> list[np.ndarray]:
    out = ts.outputs[0]
    in_scale, _ = per_tensor(ts.inputs[0] if op.type != "TRANSPOSE_CONV" else ts.inputs[2])
    out_scale, out_zero = per_tensor(out)
    if bias is not None:
        if np.dtype(bias.dtype) != np.int32:
            raise ModelError(f"{op.type}: bias is {bias.dtype}, int8 kernels need int32")
        acc = acc + bias.astype(np.int64).reshape(-1)
    single = op.type == "FULLY_CONNECTED"
    acc = requantize_channels(acc, in_scale, w_scales, out_scale, single) + out_zero
    act = op.attrs.get("fused_activation_function", "NONE")
    lo, hi = activation_range(act, out_scale, out_zero, out.dtype)
    return [saturate(acc, out.dtype, lo, hi)]


def _check_types(ts: OpTensors, x_index: int, w_index: int, op: Op) -> None:
    x, w = ts.inputs[x_index], ts.inputs[w_index]
    if x.dtype != ts.outputs[0].dtype:
        raise ModelError(f"{op.type}: input {x.dtype} and output {ts.outputs[0].dtype} differ")
    if w.dtype != "int8" and not (w.dtype == "uint8" and x.dtype == "uint8"):
        raise ModelError(f"{op.type}: {w.dtype} weights with {x.dtype} activations")


@register_quantized("CONV_2D")
def conv_2d(op: Op, inputs: list, ts: OpTensors) -> list:
    _check_types(ts, 0, 1, op)
    x, w = inputs[0].astype(np.int64), inputs[1].astype(np.int64)
    bias = inputs[2] if len(inputs) > 2 else None
    _, x_zero = per_tensor(ts.inputs[0])
    w_zero = _weight_zero(ts.inputs[1])
    acc = integer_sums(float_conv.conv_2d, op, inputs, x - x_zero, w - w_zero, 0)
    return _finish(acc, bias, ts, op, _scales(ts.inputs[1], w_zero, w.shape[0]))


@register_quantized("DEPTHWISE_CONV_2D")
def depthwise_conv_2d(op: Op, inputs: list, ts: OpTensors) -> list:
    _check_types(ts, 0, 1, op)
    x, w = inputs[0].astype(np.int64), inputs[1].astype(np.int64)
    bias = inputs[2] if len(inputs) > 2 else None
    _, x_zero = per_tensor(ts.inputs[0])
    w_zero = _weight_zero(ts.inputs[1])
    acc = integer_sums(float_conv.depthwise_conv_2d, op, inputs, x - x_zero, w - w_zero, 0)
    return _finish(acc, bias, ts, op, _scales(ts.inputs[1], w_zero, w.shape[3]))


@register_quantized("FULLY_CONNECTED")
def fully_connected(op: Op, inputs: list, ts: OpTensors) -> list:
    _check_types(ts, 0, 1, op)
    x, w = inputs[0].astype(np.int64), inputs[1].astype(np.int64)
    bias = inputs[2] if len(inputs) > 2 else None
    _, x_zero = per_tensor(ts.inputs[0])
    w_zero = _weight_zero(ts.inputs[1])
    acc = integer_sums(float_conv.fully_connected, op, inputs, x - x_zero, w - w_zero, 0)
    return _finish(acc, bias, ts, op, _scales(ts.inputs[1], w_zero, w.shape[0]))


@register_quantized("TRANSPOSE_CONV")
def transpose_conv(op: Op, inputs: list, ts: OpTensors) -> list:
    """Inputs: output_shape, weights [O, kH, kW, I], data, optional bias."""
    _check_types(ts, 2, 1, op)
    w, x = inputs[1].astype(np.int64), inputs[2].astype(np.int64)
    bias = inputs[3] if len(inputs) > 3 else None
    _, x_zero = per_tensor(ts.inputs[2])
    acc = integer_sums(float_conv.transpose_conv, op, inputs, x - x_zero, w, 2)
    return _finish(acc, bias, ts, op, _scales(ts.inputs[1], 0, w.shape[0]))


def _weight_zero(w) -> int:
    """uint8 weights (legacy uint8 models) carry a zero point; int8 weights are symmetric."""
    if w.dtype == "uint8":
        return int(w.quantization.zero_point[0])
    return 0


def _scales(w, w_zero: int, channels: int) -> np.ndarray:
    if w_zero:
        return np.full(channels, np.float32(w.quantization.scale[0]), np.float32)
    return channel_scales(w, channels)
