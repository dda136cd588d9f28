"""TFLite's quantized semantics for the reference interpreter.

An op runs in one of three modes, read from its tensors:
- "float":     float activations and float constants: the float kernels (registry.py);
- "quantized": an integer activation (int8/uint8) in or out, or QUANTIZE / DEQUANTIZE:
               the integer kernels here, as LiteRT's reference kernels compute them
               (fixed-point requantization, integer accumulators);
- "hybrid":    float activations with int8 constant weights (dynamic-range models):
               LiteRT quantizes the activations on the fly per batch, multiplies in
               integers and rescales to float (hybrid.py).
A "fake-quant" float graph (engine/transforms/quantized.py: the GPU's view of a full
int8 model) keeps quantization on float tensors; there QUANTIZE / DEQUANTIZE round
to the grid in float (quantize.py).

Kernels take (op, inputs, tensors): `tensors` holds the op's Tensor metadata
(dtype, quantization). `bind()` turns one into the interpreter's (op, inputs) form.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from engine.errors import ModelError
from engine.model.ir import Graph, Op, Tensor

INTEGER_ACTIVATIONS = ("int8", "uint8")
QUANT_OPS = ("QUANTIZE", "DEQUANTIZE")


@dataclass(frozen=True)
class OpTensors:
    """Metadata of one op's tensors (None for an omitted input)."""

    inputs: tuple[Tensor | None, ...]
    outputs: tuple[Tensor, ...]


QKernel = Callable[[Op, list, OpTensors], list]
_QUANTIZED: dict[str, QKernel] = {}
_HYBRID: dict[str, QKernel] = {}


def register_quantized(*op_types: str) -> Callable[[QKernel], QKernel]:
    """Decorator: the integer kernel of each op type."""
    return _register(_QUANTIZED, op_types)


def register_hybrid(*op_types: str) -> Callable[[QKernel], QKernel]:
    """Decorator: the dynamic-range (float activations, int8 weights) kernel."""
    return _register(_HYBRID, op_types)


def _register(table: dict, op_types: tuple[str, ...]):
    def wrap(fn: QKernel) -> QKernel:
        for t in op_types:
            if t in table:
                raise ValueError(f"quantized reference kernel for {t} registered twice")
            table[t] = fn
        return fn

    return wrap


def _load() -> None:
    from engine.reference.quantized import conv, elementwise, hybrid, pooling, quantize, shape  # noqa: F401


def _tensors(op: Op, graph: Graph) -> OpTensors:
    return OpTensors(
        tuple(graph.tensors[t] if t >= 0 else None for t in op.inputs),
        tuple(graph.tensors[t] for t in op.outputs),
    )


def is_integer_activation(t: Tensor | None) -> bool:
    """A non-constant int8/uint8/int16 tensor: a quantized activation."""
    return t is not None and not t.is_constant and t.dtype in (*INTEGER_ACTIVATIONS, "int16")


def is_quantized_constant(t: Tensor | None) -> bool:
    """Constant integer data with quantization parameters (weights, biases, operands)."""
    return (
        t is not None
        and t.is_constant
        and t.quantization is not None
        and np.dtype(t.dtype).kind in "iu"
    )


def mode(op: Op, graph: Graph) -> str:
    """The op's mode: "quantized", "hybrid" or "float" (see the module docstring)."""
    ts = _tensors(op, graph)
    if op.type in QUANT_OPS or any(map(is_integer_activation, (*ts.inputs, *ts.outputs))):
        return "quantized"
    if any(map(is_quantized_constant, ts.inputs)):
        return "hybrid"
    return "float"


def quantized_tensors(op: Op, graph: Graph) -> list[Tensor]:
    """The tensors that make `op` need integer semantics (empty for a float op)."""
    ts = _tensors(op, graph)
    return [t for t in (*ts.inputs, *ts.outputs) if is_integer_activation(t)] + [
        t for t in ts.inputs if is_quantized_constant(t)
    ]


def bind(op: Op, graph: Graph, index: int) -> Callable[[Op, list], list] | None:
    """The (op, inputs) kernel for a quantized or hybrid op; None for a float op.

    ModelError when the op needs integer semantics this interpreter lacks."""
    kind = mode(op, graph)
    if kind == "float":
        return None
    _load()
    ts = _tensors(op, graph)
    where = f"{graph.name or '<graph>'}: op #{index} {op.type}"
    for t in (*ts.inputs, *ts.outputs):
        if t is not None and t.dtype == "int16" and not t.is_constant:
            raise ModelError(
                f"{where}: tensor {t.name!r} is int16 (16x8 quantization), which the "
                "engine does not run; convert with int8 activations"
            )
    if kind == "quantized" and op.type not in QUANT_OPS:
        _check_not_mixed(ts, where)
    table = _QUANTIZED if kind == "quantized" else _HYBRID
    fn = table.get(op.type)
    if fn is None:
        t = quantized_tensors(op, graph)[0] if quantized_tensors(op, graph) else None
        what = f"tensor {t.name!r} ({t.dtype})" if t is not None else "its tensors"
        raise ModelError(f"{where}: {kind} {what}: the reference has no {kind} {op.type} kernel")

    def run(op_: Op, inputs: list) -> list:
        try:
            return fn(op_, inputs, ts)
        except ModelError as exc:
            raise ModelError(f"{where}: {exc}") from None

    return run


def _check_not_mixed(ts: OpTensors, where: str) -> None:
    """Integer kernels take integer activations only: a float activation beside them is
    a model LiteRT does not run either (it needs a QUANTIZE or DEQUANTIZE between)."""
    tensors = [t for t in (*ts.inputs, *ts.outputs) if t is not None and not t.is_constant]
    floats = [t for t in tensors if np.dtype(t.dtype).kind == "f"]
    ints = [t for t in tensors if is_integer_activation(t)]
    if floats and ints:
        raise ModelError(
            f"{where}: float tensor {floats[0].name!r} and quantized tensor {ints[0].name!r} "
            f"({ints[0].dtype}) in one op; a QUANTIZE or DEQUANTIZE must come between"
        )


def supported(kind: str) -> set[str]:
    """Op types with a "quantized" or "hybrid" kernel."""
    _load()
    return set(_QUANTIZED if kind == "quantized" else _HYBRID)
