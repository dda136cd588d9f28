"""The element-wise op table: every fact about an activation or element-wise op, once.

UNARY, per one-input op (activations, NEG, RSQRT, GELU), a `Unary`:
- numpy: its float semantics, fn(x, attrs) -> y of x's dtype, as TFLite's float
  reference kernels compute it (tensorflow/lite/kernels/internal/reference/*.h;
  comparisons such as x > 0 vs x >= 0 kept as written there);
- wgsl: the same as a WGSL expression over the vec4<E> `{x}`; its other `{fields}` come
  from `fields(attrs)` (floats become WGSL literals); `includes`: WGSL files defining
  the functions it calls (shaders/engine/common.wgsl's sigmoid and stable_tanh are
  always there). Stable forms: exp of a clamped argument, tanh through exp(-2|x|), so
  large inputs give +-1 / 0 / 1 instead of NaN on drivers whose tanh/exp overflow;
- fusable: the fusion passes may fold it into its producer's epilogue as ("act", NAME);
- quantized: how an int8 model runs it: "lookup" (a float table over the input grid, as
  LiteRT's optimized int8 kernels build theirs), "fixed_point" (a kernel of its own in
  engine/reference/quantized), None (no integer kernel).
BINARY, per two-input op with numpy broadcasting, a `Binary`: numpy, a WGSL expression
over `a` and `b`, which epilogue steps the fusion passes give it ("all", "quant" or "",
see engine/model/op_specs.py) and whether its integer result stays on its inputs' grid.
FUSED: each value of the fused_activation_function option -> the clamp TFLite's float
kernels apply (CalculateActivationRange), None where the option does nothing.

Read by: engine/model/op_specs.py (arity, shape rule), the reference interpreter
(engine/reference/elementwise.py, fused.py, registry.py, quantized/), the fusion passes
(engine/transforms/fuse.py) and the GPU (engine/gpu/kernels/elementwise.py, epilogue.py).
A new element-wise op is one entry here and a case in the tests that check it.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np


def _no_fields(attrs: dict) -> dict:
    return {}


@dataclass(frozen=True)
class Unary:
    numpy: Callable[[np.ndarray, dict], np.ndarray]
    wgsl: str
    fields: Callable[[dict], dict] = _no_fields
    includes: tuple[str, ...] = ()
    fusable: bool = False
    quantized: str | None = None

    @property
    def keeps_zero(self) -> bool:
        """f(0) == 0: zero padded lanes stay zero (LOGISTIC's 0.5 does not)."""
        return float(self.numpy(np.zeros(1, np.float32), {})[0]) == 0.0


@dataclass(frozen=True)
class Binary:
    numpy: Callable[[np.ndarray, np.ndarray], np.ndarray]
    wgsl: str
    epilogue: str = "all"
    same_grid: bool = False


def _logistic(x: np.ndarray, attrs: dict) -> np.ndarray:
    """1 / (1 + exp(-x)), written to avoid overflow warnings for very negative x."""
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1 / (1 + e), e / (1 + e))


def _leaky_relu(x: np.ndarray, attrs: dict) -> np.ndarray:
    """x > 0 ? x : x * alpha."""
    return np.where(x > 0, x, x * x.dtype.type(attrs.get("alpha", 0.2)))


def _rsqrt(x: np.ndarray, attrs: dict) -> np.ndarray:
    """1 / sqrt(x): inf at 0, nan below (std::sqrt in TFLite's float kernel)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return (1 / np.sqrt(x)).astype(x.dtype, copy=False)


_ERF = np.vectorize(math.erf, otypes=[np.float64])  # numpy has no erf; math.erf is libm's


def _gelu(x: np.ndarray, attrs: dict) -> np.ndarray:
    """approximate: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), else 0.5 x (1 + erf(x/sqrt 2))
    (tensorflow/lite/kernels/internal/reference/gelu.h); evaluated in float64."""
    v = x.astype(np.float64)
    if attrs.get("approximate", False):
        y = 0.5 * v * (1 + np.tanh(math.sqrt(2 / math.pi) * (v + 0.044715 * v**3)))
    else:
        y = 0.5 * v * (1 + _ERF(v * math.sqrt(0.5)))
    return y.astype(x.dtype)


_ZERO = "vec4<E>(0.0)"

UNARY: dict[str, Unary] = {
    "RELU": Unary(lambda x, a: np.maximum(x, 0), f"max({{x}}, {_ZERO})",
                  fusable=True, quantized="fixed_point"),
    "RELU6": Unary(lambda x, a: np.clip(x, 0, 6), f"clamp({{x}}, {_ZERO}, vec4<E>(6.0))",
                   fusable=True, quantized="fixed_point"),
    "RELU_N1_TO_1": Unary(lambda x, a: np.clip(x, -1, 1),
                          "clamp({x}, vec4<E>(-1.0), vec4<E>(1.0))",
                          fusable=True, quantized="fixed_point"),
    "LOGISTIC": Unary(_logistic, "sigmoid({x})", fusable=True, quantized="lookup"),
    "TANH": Unary(lambda x, a: np.tanh(x), "stable_tanh({x})", fusable=True, quantized="lookup"),
    # x * relu6(x + 3) / 6
    "HARD_SWISH": Unary(lambda x, a: x * np.clip(x + 3, 0, 6) / 6,
                        f"{{x}} * clamp({{x}} + vec4<E>(3.0), {_ZERO}, vec4<E>(6.0)) "
                        "* vec4<E>(1.0 / 6.0)",
                        fusable=True, quantized="fixed_point"),
    # x < 0 ? expm1(x) : x
    "ELU": Unary(lambda x, a: np.where(x < 0, np.expm1(np.minimum(x, 0)), x),
                 f"select({{x}}, exp(min({{x}}, {_ZERO})) - vec4<E>(1.0), {{x}} < {_ZERO})",
                 quantized="lookup"),
    "LEAKY_RELU": Unary(_leaky_relu, f"select({{x}} * vec4<E>({{alpha}}), {{x}}, {{x}} > {_ZERO})",
                        fields=lambda a: {"alpha": a.get("alpha", 0.2)},
                        quantized="fixed_point"),
    "NEG": Unary(lambda x, a: np.negative(x), "-{x}"),
    "RSQRT": Unary(_rsqrt, "inverseSqrt({x})"),  # E is f32: an fp16 variance + 1e-6 keeps it
    "GELU": Unary(_gelu, "gelu_{form}({x})",  # shaders/engine/gelu.wgsl
                  fields=lambda a: {"form": "tanh" if a.get("approximate") else "erf"},
                  includes=("gelu.wgsl",)),
}  # fmt: skip

BINARY: dict[str, Binary] = {
    "ADD": Binary(np.add, "a + b"),
    "SUB": Binary(np.subtract, "a - b"),
    "MUL": Binary(np.multiply, "a * b"),
    "DIV": Binary(np.divide, "a / b"),
    "MAXIMUM": Binary(np.maximum, "max(a, b)", same_grid=True),
    "MINIMUM": Binary(np.minimum, "min(a, b)", same_grid=True),
    # no options (activation NONE); the fusion passes leave it alone
    "SQUARED_DIFFERENCE": Binary(lambda a, b: np.square(a - b), "(a - b) * (a - b)",
                                 epilogue=""),
}  # fmt: skip

FUSED: dict[str, tuple[float, float] | None] = {
    "NONE": None,
    "RELU": (0.0, math.inf),
    "RELU6": (0.0, 6.0),
    "RELU_N1_TO_1": (-1.0, 1.0),
    # CalculateActivationRange maps every other value (TANH, SIGN_BIT) to (-inf, inf):
    # as a fused activation they do nothing.
    "TANH": None,
    "SIGN_BIT": None,
}


def fused_steps(name: str) -> tuple[tuple[str, str], ...]:
    """The epilogue steps of fused_activation_function `name`: (("act", name),), or ()
    where it does nothing (NONE, TANH, SIGN_BIT)."""
    return () if name in FUSED and FUSED[name] is None else (("act", name),)
