"""Dynamic-range ("hybrid") kernels: float activations, int8 constant weights.

LiteRT quantizes the float input on the fly, once per batch element, multiplies
in integers and rescales the sums to float (conv.cc EvalHybrid[PerChannel],
depthwise_conv.cc, fully_connected.cc EvalHybridDense; portable_tensor_utils.cc):
- asymmetric (per-channel conv and depthwise; FULLY_CONNECTED with
  asymmetric_quantize_inputs): [min(0, x), max(0, x)] onto [-128, 127] with a
  nudged zero point (AsymmetricQuantizeFloats);
- symmetric (per-tensor conv; FULLY_CONNECTED otherwise): max|x| onto 127
  (SymmetricQuantizeFloats), the scale folded with the weights' scale;
then y = acc * weight_scale[c] * input_scale + bias (float32), the fused
activation in float. The integer sums reuse the float kernels on exact float64.
"""

from __future__ import annotations

import numpy as np

from engine.errors import ModelError
from engine.model.ir import Op
from engine.reference import conv as float_conv
from engine.reference.quantized import OpTensors, register_hybrid
from engine.reference.quantized.conv import integer_sums
from engine.reference.quantized.fixed_point import round_half_away
from engine.reference.registry import fused_activation

f32 = np.float32


def asymmetric_quantize(x: np.ndarray) -> tuple[np.ndarray, np.float32, int]:
    """(int values, scale, zero point) of one batch element (AsymmetricQuantizeFloats)."""
    x = x.astype(f32)
    rmin, rmax = float(min(0.0, x.min())), float(max(0.0, x.max()))
    if rmin == rmax:
        return np.zeros(x.shape, np.int64), f32(1), 0
    scale = (rmax - rmin) / 255.0  # double, as the C++
    from_min, from_max = -128 - rmin / scale, 127 - rmax / scale
    err_min, err_max = 128 + abs(rmin / scale), 127 + abs(rmax / scale)
    zero_d = from_min if err_min < err_max else from_max
    zero = -128 if zero_d <= -128 else 127 if zero_d >= 127 else int(round_half_away(zero_d))
    inv = f32(1.0 / float(f32(scale)))
    # Rounded before the zero point is added: LiteRT maps x * inv = k + 0.5 to k + 1 +
    # zero (measured on exact halves; the portable C++ would round zero + x * inv).
    q = round_half_away((x * inv).astype(f32)) + zero
    return np.clip(q, -128, 127).astype(np.int64), f32(scale), zero


def symmetric_quantize(x: np.ndarray) -> tuple[np.ndarray, np.float32]:
    """(int values, scale) of one batch element (SymmetricQuantizeFloats)."""
    x = x.astype(f32)
    rng = f32(max(abs(float(x.min())), abs(float(x.max()))))
    if rng == 0:
        return np.zeros(x.shape, np.int64), f32(1)
    q = round_half_away((x * (f32(127) / rng)).astype(f32))
    return np.clip(q, -127, 127).astype(np.int64), f32(rng / f32(127))


def _weight_scales(ts: OpTensors, index: int, channels: int) -> np.ndarray:
    q = ts.inputs[index].quantization
    if ts.inputs[index].dtype != "int8":
        raise ModelError(f"hybrid kernels need int8 weights, not {ts.inputs[index].dtype}")
    if any(z != 0 for z in q.zero_point):
        raise ModelError("hybrid weights must be symmetric (zero point 0)")
    return np.broadcast_to(np.asarray(q.scale, f32), (channels,)).astype(f32)


def _per_channel(scales: np.ndarray) -> bool:
    # conv.cc: the per-channel path only when the scales actually differ.
    return scales.size > 1 and bool(np.any(scales != scales[0]))


def _conv_like(fn, op: Op, inputs: list, ts: OpTensors, channels: int, x_index: int = 0) -> list:
    """A hybrid conv-family op whose data is input `x_index`, weights input 1, bias last."""
    x, w = inputs[x_index], inputs[1]
    bias_index = x_index + 1 if x_index else 2
    bias = inputs[bias_index] if len(inputs) > bias_index else None
    scales = _weight_scales(ts, 1, channels)
    out = []
    for b in range(x.shape[0]):
        if _per_channel(scales):
            q, sf, zero = asymmetric_quantize(x[b : b + 1])
            acc = integer_sums(fn, op, inputs, q - zero, w, x_index)
            y = (acc.astype(f32) * scales).astype(f32) * sf
        else:
            q, sf = symmetric_quantize(x[b : b + 1])
            acc = integer_sums(fn, op, inputs, q, w, x_index)
            y = acc.astype(f32) * (sf * scales)
        if bias is not None:
            y = y.astype(f32) + bias.astype(f32).reshape(-1)
        out.append(y.astype(f32))
    return [fused_activation(np.concatenate(out), op).astype(x.dtype)]


@register_hybrid("CONV_2D")
def conv_2d(op: Op, inputs: list, ts: OpTensors) -> list:
    return _conv_like(float_conv.conv_2d, op, inputs, ts, inputs[1].shape[0])


@register_hybrid("DEPTHWISE_CONV_2D")
def depthwise_conv_2d(op: Op, inputs: list, ts: OpTensors) -> list:
    return _conv_like(float_conv.depthwise_conv_2d, op, inputs, ts, inputs[1].shape[3])


@register_hybrid("TRANSPOSE_CONV")
def transpose_conv(op: Op, inputs: list, ts: OpTensors) -> list:
    return _conv_like(float_conv.transpose_conv, op, inputs, ts, inputs[1].shape[0], x_index=2)


@register_hybrid("FULLY_CONNECTED")
def fully_connected(op: Op, inputs: list, ts: OpTensors) -> list:
    """Each row of the [batch, I] input is quantized on its own."""
    x, w = inputs[0], inputs[1]
    bias = inputs[2] if len(inputs) > 2 else None
    o, i = w.shape
    rows = x.reshape(-1, i)
    scales = _weight_scales(ts, 1, o)
    per_channel = scales.size > 1 and len(ts.inputs[1].quantization.scale) > 1
    asymmetric = bool(op.attrs.get("asymmetric_quantize_inputs", False))
    y = (
        np.zeros((rows.shape[0], o), f32)
        if bias is None
        else np.tile(bias.astype(f32), (len(rows), 1))
    )
    wi = w.astype(np.int64)
    for r, row in enumerate(rows):
        if asymmetric:
            q, sf, zero = asymmetric_quantize(row)
        else:
            (q, sf), zero = symmetric_quantize(row), 0
        dot = (wi @ q - zero * wi.sum(axis=1)).astype(f32)
        scale = sf * scales if per_channel else np.full(o, sf * scales[0], f32)
        y[r] += dot * scale.astype(f32)
    if op.attrs.get("keep_num_dims", False):
        y = y.reshape(*x.shape[:-1], o)
    return [fused_activation(y, op).astype(x.dtype)]
