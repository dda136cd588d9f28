"""SOFTMAX over the last axis: exp((x - max) * beta) / sum, as TFLite's float kernel."""

from __future__ import annotations

import numpy as np

from engine.model.ir import Op
from engine.reference.registry import register


@register("SOFTMAX")
def softmax(op: Op, inputs: list) -> list:
    x = inputs[0]
    beta = x.dtype.type(op.attrs.get("beta", 1.0))
    e = np.exp((x - x.max(axis=-1, keepdims=True)) * beta)
    return [e / e.sum(axis=-1, keepdims=True)]
