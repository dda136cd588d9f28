"""Convolutions: CONV_2D, DEPTHWISE_CONV_2D, TRANSPOSE_CONV, MediaPipe's
Convolution2DTransposeBias, FULLY_CONNECTED.

Layouts are TFLite's: data NHWC, conv weights [O, kH, kW, I], depthwise weights
[1, kH, kW, I * M] (output channel i * M + m), fully connected weights [O, I].
"""

from __future__ import annotations

import numpy as np

from engine.errors import ModelError
from engine.model.ir import Op
from engine.reference.padding import pad_before, windows
from engine.reference.registry import const_ints, fused_activation, register


def _patches(x: np.ndarray, op: Op, kh: int, kw: int) -> np.ndarray:
    """Zero-padded windows [N, OH, OW, kH, kW, C] under the op's padding/stride/dilation."""
    a = op.attrs
    stride = (int(a.get("stride_h", 1)), int(a.get("stride_w", 1)))
    dilation = (int(a.get("dilation_h_factor", 1)), int(a.get("dilation_w_factor", 1)))
    try:
        return windows(x, a.get("padding", "VALID"), (kh, kw), stride, dilation)
    except ModelError as e:
        raise ModelError(f"{op.type}: {e}") from None


def _bias(y: np.ndarray, bias: np.ndarray | None) -> np.ndarray:
    return y if bias is None else y + bias.reshape(-1)


@register("CONV_2D")
def conv_2d(op: Op, inputs: list) -> list:
    """Convolution; grouped when the input has a multiple of the filter's channels."""
    x, w = inputs[0], inputs[1]
    bias = inputs[2] if len(inputs) > 2 else None
    o, kh, kw, i = w.shape
    c = x.shape[3]
    if c % i or o % (c // i):
        raise ModelError(f"CONV_2D: input channels {c} do not match filter {w.shape}")
    groups = c // i
    p = _patches(x, op, kh, kw)  # [N, OH, OW, kH, kW, C]
    p = p.reshape(*p.shape[:5], groups, i)
    wg = w.reshape(groups, o // groups, kh, kw, i)
    y = np.einsum("nhwyxgi,goyxi->nhwgo", p, wg, optimize=True)
    y = y.reshape(*y.shape[:3], o)
    return [fused_activation(_bias(y, bias), op)]


@register("DEPTHWISE_CONV_2D")
def depthwise_conv_2d(op: Op, inputs: list) -> list:
    """Per-channel convolution; each input channel feeds depth_multiplier outputs."""
    x, w = inputs[0], inputs[1]
    bias = inputs[2] if len(inputs) > 2 else None
    _, kh, kw, oc = w.shape
    c = x.shape[3]
    if oc % c:
        raise ModelError(f"DEPTHWISE_CONV_2D: {oc} output channels for {c} input channels")
    m = oc // c  # TFLite derives the multiplier from the shapes, not the attribute
    p = _patches(x, op, kh, kw)  # [N, OH, OW, kH, kW, C]
    y = np.einsum("nhwyxc,yxcm->nhwcm", p, w.reshape(kh, kw, c, m), optimize=True)
    y = y.reshape(*y.shape[:3], oc)
    return [fused_activation(_bias(y, bias), op)]


def _scatter_transpose(
    x: np.ndarray,
    w: np.ndarray,
    stride: tuple[int, int],
    pad: tuple[int, int],
    out_hw: tuple[int, int],
) -> np.ndarray:
    """Transposed conv: input pixel (iy, ix) adds x * w[o, fy, fx, i] into
    out[iy * s - pad + fy, ix * s - pad + fx]; taps outside the output are dropped."""
    n, h, wd, _ = x.shape
    o, kh, kw, _ = w.shape
    (sh, sw), (ph, pw), (oh, ow) = stride, pad, out_hw
    contrib = np.einsum("nhwi,oyxi->nhwyxo", x, w, optimize=True)
    full_h = max((h - 1) * sh + kh, ph + oh)
    full_w = max((wd - 1) * sw + kw, pw + ow)
    full = np.zeros((n, full_h, full_w, o), dtype=contrib.dtype)
    for fy in range(kh):
        for fx in range(kw):
            full[:, fy : fy + (h - 1) * sh + 1 : sh, fx : fx + (wd - 1) * sw + 1 : sw] += contrib[
                :, :, :, fy, fx
            ]
    return full[:, ph : ph + oh, pw : pw + ow]


@register("TRANSPOSE_CONV")
def transpose_conv(op: Op, inputs: list) -> list:
    """Inputs: output_shape, weights [O, kH, kW, I], data, optional bias."""
    shape = const_ints(inputs[0], "output_shape", op)
    w, x = inputs[1], inputs[2]
    bias = inputs[3] if len(inputs) > 3 else None
    a = op.attrs
    pad, sh, sw = a.get("padding", "VALID"), int(a.get("stride_h", 1)), int(a.get("stride_w", 1))
    _, kh, kw, _ = w.shape
    oh, ow = shape[1], shape[2]
    # TFLite computes the padding as if for a forward conv from the output back to the input.
    ph, pw = pad_before(pad, oh, kh, sh), pad_before(pad, ow, kw, sw)
    y = _scatter_transpose(x, w, (sh, sw), (ph, pw), (oh, ow))
    return [fused_activation(_bias(y, bias), op)]


@register("Convolution2DTransposeBias")
def convolution_2d_transpose_bias(op: Op, inputs: list) -> list:
    """MediaPipe custom op: inputs data NHWC, weights [O, kH, kW, I], bias [O].

    out = stride * (in - 1) + k - pad_total; SAME pad_total = max(0, k - (in - 1) % stride - 1),
    floor half before (mediapipe/util/tflite/operations/transpose_conv_bias.cc).
    """
    x, w, bias = inputs[0], inputs[1], inputs[2]
    a = op.attrs
    sh, sw = int(a.get("stride_h", 1)), int(a.get("stride_w", 1))
    _, kh, kw, _ = w.shape
    _, h, wd, _ = x.shape
    same = a.get("padding", "VALID") == "SAME"
    th = max(0, kh - (h - 1) % sh - 1) if same else 0
    tw = max(0, kw - (wd - 1) % sw - 1) if same else 0
    oh, ow = sh * (h - 1) + kh - th, sw * (wd - 1) + kw - tw
    return [_bias(_scatter_transpose(x, w, (sh, sw), (th // 2, tw // 2), (oh, ow)), bias)]


@register("FULLY_CONNECTED")
def fully_connected(op: Op, inputs: list) -> list:
    """y = x.reshape(-1, I) @ W.T + b; keep_num_dims keeps x's leading dims."""
    x, w = inputs[0], inputs[1]
    bias = inputs[2] if len(inputs) > 2 else None
    fmt = op.attrs.get("weights_format", "DEFAULT")
    if fmt not in ("DEFAULT", 0):  # the importer may keep this enum as its integer
        raise ModelError(f"FULLY_CONNECTED: weights_format {fmt} has no float reference kernel")
    o, i = w.shape
    if x.size % i:
        raise ModelError(f"FULLY_CONNECTED: input {x.shape} is not a multiple of {i} features")
    y = _bias(x.reshape(-1, i) @ w.T, bias)
    if op.attrs.get("keep_num_dims", False):
        y = y.reshape(*x.shape[:-1], o)
    return [fused_activation(y, op)]
