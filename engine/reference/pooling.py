"""Pooling: MAX_POOL_2D, AVERAGE_POOL_2D (Pool2DOptions), and the reducers MEAN, SUM,
REDUCE_PROD over axes."""

from __future__ import annotations

import numpy as np

from engine.errors import ModelError
from engine.model.ir import Op
from engine.reference.padding import windows
from engine.reference.registry import const_ints, fused_activation, register


def window_args(op: Op) -> tuple[str, tuple[int, int], tuple[int, int]]:
    a = op.attrs
    k = (int(a["filter_height"]), int(a["filter_width"]))
    stride = (int(a.get("stride_h", 1)), int(a.get("stride_w", 1)))
    return a.get("padding", "VALID"), k, stride


@register("MAX_POOL_2D")
def max_pool_2d(op: Op, inputs: list) -> list:
    """Max over the in-bounds part of each window (padding never wins)."""
    x = inputs[0]
    w = windows(x, *window_args(op), fill=-np.inf)
    return [fused_activation(w.max(axis=(3, 4)), op)]


@register("AVERAGE_POOL_2D")
def average_pool_2d(op: Op, inputs: list) -> list:
    """Window sum divided by the number of in-bounds taps, not by kH * kW
    (tensorflow/lite/kernels/internal/reference/pooling.h, filter_count)."""
    x = inputs[0]
    args = window_args(op)
    total = windows(x, *args).sum(axis=(3, 4))
    count = windows(np.ones((1, *x.shape[1:3], 1), x.dtype), *args).sum(axis=(3, 4))
    return [fused_activation(total / count, op)]


_REDUCERS = {"MEAN": np.mean, "SUM": np.sum, "REDUCE_PROD": np.prod}


@register(*_REDUCERS)
def reduce(op: Op, inputs: list) -> list:
    """MEAN / SUM / REDUCE_PROD over the axes in input 1 (negative and repeated axes
    allowed), in the input's dtype (int32 shape products stay int32)."""
    x = inputs[0]
    axes = sorted({a % x.ndim for a in const_ints(inputs[1], "axes", op)}) if x.ndim else []
    if op.type == "MEAN" and any(x.shape[a] == 0 for a in axes):
        raise ModelError(f"MEAN: empty reduction over axes {axes} of {x.shape}")
    keep = bool(op.attrs.get("keep_dims", False))
    y = _REDUCERS[op.type](x, axis=tuple(axes), keepdims=keep)
    return [np.asarray(y, dtype=x.dtype)]
