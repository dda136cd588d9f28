"""LAYER_NORM: an engine-internal op (no TFLite builtin), written by the fuse_layer_norm
transform in place of the MEAN / SQUARED_DIFFERENCE / MEAN / ADD / RSQRT / MUL chain a
converted LayerNormalization becomes.

Inputs: x, gamma (or -1), beta (or -1), both broadcast against x's last axis.
Attributes: epsilon. Over the last axis:
    m = mean(x); v = mean((x - m)^2); y = (x - m) * rsqrt(v + epsilon) * gamma + beta
(the same steps, in the same order, as the chain it replaces).
"""

from __future__ import annotations

import numpy as np

from engine.model.ir import Op
from engine.reference.registry import register


@register("LAYER_NORM")
def layer_norm(op: Op, inputs: list) -> list:
    x = inputs[0]
    gamma = inputs[1] if len(inputs) > 1 else None
    beta = inputs[2] if len(inputs) > 2 else None
    eps = x.dtype.type(op.attrs["epsilon"])
    m = x.mean(axis=-1, keepdims=True)
    d = x - m
    r = 1 / np.sqrt((d * d).mean(axis=-1, keepdims=True) + eps)
    y = d * r
    if gamma is not None:
        y = y * gamma
    if beta is not None:
        y = y + beta
    return [y.astype(x.dtype, copy=False)]
