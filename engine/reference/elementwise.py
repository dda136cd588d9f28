"""Element-wise ops: every entry of the element-wise table (engine/model/elementwise.py),
binary ones with numpy broadcasting and their fused activation, and PRELU.

The formulas are the table's; they follow TFLite's float reference kernels
(tensorflow/lite/kernels/internal/reference/*.h).
"""

from __future__ import annotations

import numpy as np

from engine.model.elementwise import BINARY, UNARY
from engine.model.ir import Op
from engine.reference.registry import fused_activation, register


@register(*BINARY)
def binary(op: Op, inputs: list) -> list:
    """a (op) b with numpy broadcasting, then the fused activation (if any)."""
    a, b = inputs[0], inputs[1]
    with np.errstate(divide="ignore", invalid="ignore"):  # DIV by 0 gives inf/nan, as in C
        y = BINARY[op.type].numpy(a, b)
    return [fused_activation(y, op)]


@register(*UNARY)
def unary(op: Op, inputs: list) -> list:
    """The table's float semantics of the op, in the input's dtype."""
    return [UNARY[op.type].numpy(inputs[0], op.attrs)]


@register("PRELU")
def prelu(op: Op, inputs: list) -> list:
    """x >= 0 ? x : x * alpha, alpha broadcast against x."""
    x, alpha = inputs[0], inputs[1]
    return [np.where(x >= 0, x, x * alpha)]
