"""Op type -> numpy kernel registry for the reference interpreter.

A kernel is `fn(op, inputs) -> outputs`: `inputs` holds one array per op input
(None where the input is omitted, id -1), `outputs` one array per op output.
Float inputs arrive already in the interpreter's compute dtype; kernels keep it.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

import numpy as np

from engine.errors import ModelError
from engine.model.elementwise import FUSED
from engine.model.ir import Op, Tensor
from engine.model.op_specs import SPECS, output_shapes

Kernel = Callable[[Op, list[np.ndarray | None]], list[np.ndarray]]

_KERNELS: dict[str, Kernel] = {}


def register(*op_types: str) -> Callable[[Kernel], Kernel]:
    """Decorator: make `fn` the reference kernel of each op type given."""

    def wrap(fn: Kernel) -> Kernel:
        for t in op_types:
            if t in _KERNELS:
                raise ValueError(f"reference kernel for {t} registered twice")
            _KERNELS[t] = fn
        return fn

    return wrap


def kernel(op_type: str) -> Kernel | None:
    """The kernel registered for `op_type`, or None."""
    _load_families()
    return _KERNELS.get(op_type)


def supported_ops() -> set[str]:
    """Every op type (builtin names and custom codes) with a reference kernel."""
    _load_families()
    return set(_KERNELS)


# The modules holding kernels: importing one runs its @register decorators. Loaded by name
# (a plugin list, as engine/gpu/kernels does) so the families depend on the registry and
# not the other way round.
FAMILIES = ("conv", "elementwise", "matmul", "normalization", "pooling", "resize", "shape",
            "shape_ops", "softmax", "fused", "landmark_ops")  # fmt: skip


def _load_families() -> None:
    for name in FAMILIES:
        importlib.import_module(f"engine.reference.{name}")


def output_types(op: Op, inputs: list[Tensor | None]) -> list[tuple[tuple[int, ...], str]]:
    """Each output's (shape, dtype) for inputs of these shapes, dtypes and (constant) data:
    the op table's shape rule where it says (engine/model/op_specs.py output_shapes; dtype:
    numpy's result type of the inputs that are not indices), else what the op's reference
    kernel gives on zeros of the input shapes, constant inputs as they are. ModelError
    when neither knows; op_specs.Invalid when the inputs cannot go together."""
    shapes = [None if t is None else tuple(t.shape) for t in inputs]
    values = [None if t is None else t.data for t in inputs]
    ruled = output_shapes(op.type, op.attrs, shapes, values)
    if ruled is not None:
        spec = SPECS[op.type]
        kinds = [
            t.dtype for k, t in enumerate(inputs) if t is not None and spec.type_class(k) != "i"
        ]
        dtype = np.result_type(*kinds).name if kinds else "float32"
        return [(tuple(shape), dtype) for shape in ruled]
    fn = kernel(op.type)
    if fn is None:
        raise ModelError(f"{op.type}: no shape rule and no reference kernel to find its outputs")
    args = [None if t is None else t.data if t.is_constant else np.zeros(t.shape, t.dtype)
            for t in inputs]  # fmt: skip
    return [(np.shape(y), np.asarray(y).dtype.name) for y in fn(op, args)]


# Shared helpers for kernels --------------------------------------------------


def fused_activation(x: np.ndarray, op: Op) -> np.ndarray:
    """Apply the op's fused_activation_function the way TFLite's float kernels do: the clamp
    of engine/model/elementwise.py FUSED."""
    name = op.attrs.get("fused_activation_function", "NONE")
    if name not in FUSED:
        raise ModelError(f"{op.type}: unknown fused activation {name!r}")
    bounds = FUSED[name]
    if bounds is None:
        return x
    lo, hi = bounds
    return np.clip(x, lo, hi) if np.isfinite(hi) else np.maximum(x, lo)


def const_ints(a: np.ndarray | None, what: str, op: Op) -> list[int]:
    """An int tensor input (axes, paddings, shapes) as a flat list of Python ints."""
    if a is None:
        raise ModelError(f"{op.type}: missing {what} input")
    return [int(v) for v in np.asarray(a).reshape(-1)]
