"""RESIZE_BILINEAR and RESIZE_NEAREST_NEIGHBOR, as tensorflow/lite/kernels/internal/
reference/resize_bilinear.h and resize_nearest_neighbor.h compute them.

Source coordinates are computed in float32 like the C++ code, so the chosen source
pixels (and nearest-neighbour ties) match bit for bit; only the blend runs in the
compute dtype.
"""

from __future__ import annotations

import numpy as np

from engine.errors import ModelError
from engine.model.ir import Op
from engine.reference.registry import const_ints, register

f32 = np.float32


def source_scale(in_size: int, out_size: int, align_corners: bool) -> np.float32:
    if align_corners and out_size > 1:
        return f32(in_size - 1) / f32(out_size - 1)
    return f32(in_size) / f32(out_size)


def _bilinear_axis(in_size: int, out_size: int, align: bool, half: bool):
    """Per output index: lower/upper source index and the float32 weight of the upper one.

    With half_pixel_centers the source coordinate can be negative; TFLite clamps the
    indices but not the weight, so lower == upper and the weights still sum to one.
    """
    scale = source_scale(in_size, out_size, align)
    i = np.arange(out_size, dtype=f32)
    v = (i + f32(0.5)) * scale - f32(0.5) if half else i * scale
    lo = np.maximum(np.floor(v).astype(np.int64), 0)
    hi = np.minimum(np.ceil(v).astype(np.int64), in_size - 1)
    return lo, hi, (v - lo.astype(f32)).astype(f32)


def output_size(op: Op, inputs: list) -> tuple[int, int]:
    size = const_ints(inputs[1] if len(inputs) > 1 else None, "size", op)
    if len(size) != 2 or min(size) <= 0:
        raise ModelError(f"{op.type}: size must be two positive ints, got {size}")
    return size[0], size[1]


def resize_flags(op: Op) -> tuple[bool, bool]:
    align = bool(op.attrs.get("align_corners", False))
    half = bool(op.attrs.get("half_pixel_centers", False))
    return align, half


@register("RESIZE_BILINEAR")
def resize_bilinear(op: Op, inputs: list) -> list:
    x = inputs[0]
    (oh, ow), (align, half) = output_size(op, inputs), resize_flags(op)
    if align and half:  # TFLite's Prepare rejects this pair (resize_bilinear.cc)
        raise ModelError("RESIZE_BILINEAR: half_pixel_centers requires align_corners False")
    y0, y1, dy = _bilinear_axis(x.shape[1], oh, align, half)
    x0, x1, dx = _bilinear_axis(x.shape[2], ow, align, half)
    t = x.dtype.type
    dy, dx = dy.astype(t)[None, :, None, None], dx.astype(t)[None, None, :, None]
    top, bot = x[:, y0], x[:, y1]
    # Same term order as the C++: (y0,x0), (y1,x0), (y0,x1), (y1,x1).
    out = (
        top[:, :, x0] * (1 - dy) * (1 - dx)
        + bot[:, :, x0] * dy * (1 - dx)
        + top[:, :, x1] * (1 - dy) * dx
        + bot[:, :, x1] * dy * dx
    )
    return [out.astype(x.dtype, copy=False)]


def _nearest_axis(in_size: int, out_size: int, align: bool, half: bool) -> np.ndarray:
    """Source index per output index (GetNearestNeighbor in the TFLite reference)."""
    scale = source_scale(in_size, out_size, align)
    v = (np.arange(out_size, dtype=f32) + f32(0.5 if half else 0.0)) * scale  # float32 math
    # align_corners rounds half away from zero (TfLiteRound); v >= 0, so floor(v + 0.5),
    # done in float64 so that v + 0.5 itself is exact.
    idx = np.floor(v.astype(np.float64) + 0.5) if align else np.floor(v)
    idx = np.minimum(idx.astype(np.int64), in_size - 1)
    return np.maximum(idx, 0) if half else idx


@register("RESIZE_NEAREST_NEIGHBOR")
def resize_nearest_neighbor(op: Op, inputs: list) -> list:
    x = inputs[0]
    (oh, ow), (align, half) = output_size(op, inputs), resize_flags(op)
    ys = _nearest_axis(x.shape[1], oh, align, half)
    xs = _nearest_axis(x.shape[2], ow, align, half)
    return [x[:, ys][:, :, xs]]
