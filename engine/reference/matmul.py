"""BATCH_MATMUL: x @ y over the last two axes, batch axes broadcast (numpy rules).

adj_x / adj_y transpose the last two axes of x / y first
(tensorflow/lite/kernels/batch_matmul.cc). Accumulates in the compute dtype (BLAS).
"""

from __future__ import annotations

import numpy as np

from engine.errors import ModelError
from engine.model.ir import Op
from engine.reference.registry import register


@register("BATCH_MATMUL")
def batch_matmul(op: Op, inputs: list) -> list:
    x, y = inputs[0], inputs[1]
    if x.ndim < 2 or y.ndim < 2:
        raise ModelError(f"BATCH_MATMUL: operands of rank {x.ndim} and {y.ndim}, need >= 2")
    if op.attrs.get("adj_x", False):
        x = np.swapaxes(x, -1, -2)
    if op.attrs.get("adj_y", False):
        y = np.swapaxes(y, -1, -2)
    if x.shape[-1] != y.shape[-2]:
        raise ModelError(f"BATCH_MATMUL: inner dimensions differ: {x.shape} @ {y.shape}")
    return [np.matmul(x, y)]
