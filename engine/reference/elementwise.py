"""Elementwise ops: broadcasting binary ops with fused activation (SQUARED_DIFFERENCE
included), activations, NEG, RSQRT and GELU.

Formulas follow TFLite's float reference kernels (tensorflow/lite/kernels/internal/
reference/*.h); comparisons such as x > 0 vs x >= 0 are kept as written there.
"""

from __future__ import annotations

import math

import numpy as np

from engine.model.ir import Op
from engine.reference.registry import fused_activation, register

_BINARY = {
    "ADD": np.add,
    "SUB": np.subtract,
    "MUL": np.multiply,
    "DIV": np.divide,
    "MAXIMUM": np.maximum,
    "MINIMUM": np.minimum,
    "SQUARED_DIFFERENCE": lambda a, b: np.square(a - b),  # no options: activation NONE
}


@register(*_BINARY)
def binary(op: Op, inputs: list) -> list:
    """a (op) b with numpy broadcasting, then the fused activation (if any)."""
    a, b = inputs[0], inputs[1]
    with np.errstate(divide="ignore", invalid="ignore"):  # DIV by 0 gives inf/nan, as in C
        y = _BINARY[op.type](a, b)
    return [fused_activation(y, op)]


@register("RELU")
def relu(op: Op, inputs: list) -> list:
    return [np.maximum(inputs[0], 0)]


@register("RELU6")
def relu6(op: Op, inputs: list) -> list:
    return [np.clip(inputs[0], 0, 6)]


@register("RELU_N1_TO_1")
def relu_n1_to_1(op: Op, inputs: list) -> list:
    return [np.clip(inputs[0], -1, 1)]


@register("PRELU")
def prelu(op: Op, inputs: list) -> list:
    """x >= 0 ? x : x * alpha, alpha broadcast against x."""
    x, alpha = inputs[0], inputs[1]
    return [np.where(x >= 0, x, x * alpha)]


@register("LEAKY_RELU")
def leaky_relu(op: Op, inputs: list) -> list:
    """x > 0 ? x : x * alpha."""
    x = inputs[0]
    alpha = x.dtype.type(op.attrs.get("alpha", 0.2))
    return [np.where(x > 0, x, x * alpha)]


@register("HARD_SWISH")
def hard_swish(op: Op, inputs: list) -> list:
    """x * relu6(x + 3) / 6."""
    x = inputs[0]
    return [x * np.clip(x + 3, 0, 6) / 6]


@register("LOGISTIC")
def logistic(op: Op, inputs: list) -> list:
    """1 / (1 + exp(-x)), written to avoid overflow warnings for very negative x."""
    x = inputs[0]
    e = np.exp(-np.abs(x))
    return [np.where(x >= 0, 1 / (1 + e), e / (1 + e))]


@register("TANH")
def tanh(op: Op, inputs: list) -> list:
    return [np.tanh(inputs[0])]


@register("ELU")
def elu(op: Op, inputs: list) -> list:
    """x < 0 ? expm1(x) : x."""
    x = inputs[0]
    return [np.where(x < 0, np.expm1(np.minimum(x, 0)), x)]


@register("NEG")
def neg(op: Op, inputs: list) -> list:
    return [np.negative(inputs[0])]


@register("RSQRT")
def rsqrt(op: Op, inputs: list) -> list:
    """1 / sqrt(x): inf at 0, nan below (std::sqrt in TFLite's float kernel)."""
    x = inputs[0]
    with np.errstate(divide="ignore", invalid="ignore"):
        return [(1 / np.sqrt(x)).astype(x.dtype, copy=False)]


_ERF = np.vectorize(math.erf, otypes=[np.float64])  # numpy has no erf; math.erf is libm's


@register("GELU")
def gelu(op: Op, inputs: list) -> list:
    """approximate: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), else 0.5 x (1 + erf(x/sqrt 2))
    (tensorflow/lite/kernels/internal/reference/gelu.h); evaluated in float64."""
    x = inputs[0]
    v = x.astype(np.float64)
    if op.attrs.get("approximate", False):
        y = 0.5 * v * (1 + np.tanh(math.sqrt(2 / math.pi) * (v + 0.044715 * v**3)))
    else:
        y = 0.5 * v * (1 + _ERF(v * math.sqrt(0.5)))
    return [y.astype(x.dtype)]
