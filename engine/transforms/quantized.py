"""Quantized models in float, as TFLite's GPU delegate runs them (its quantized-model mode).

to_float(graph) (the engine runs it on every graph, before the optional passes):
1. constant integer data with quantization parameters (int8 weights of dynamic-range
   and full-int8 models, int32 biases, int8 operands) -> float32 constants
   (scale * (q - zero_point), per channel along the quantized dimension);
2. int8/uint8 activations -> float32 tensors holding the real values; each keeps its
   quantization (with the integer type in Quantization.dtype) as the grid it lives on;
3. an op that writes a quantized activation gets a QUANTIZE after it: the float result
   rounded to the output's grid and clamped to the type's range (fake quantization),
   so values stay where the integer kernels would put them (to within one step where
   rounding differs) instead of drifting by a fraction of a step per layer. Ops that
   only move values (RESHAPE, MAX_POOL_2D, CONCATENATION, PAD, ...) on one grid need
   none. QUANTIZE float -> int becomes that rounding; DEQUANTIZE int -> float a copy.
Graph inputs and outputs keep their names; Engine.run converts int8 feeds and results
(engine/gpu/quant_io.py). A quantized op the float path cannot express (int16
activations, per-channel activations, a move that reinterprets integers on another
grid, an op without quantized semantics in engine/reference/quantized) is a ModelError.

fuse_quantize (last of the optional passes): a QUANTIZE float -> float that is the only
reader of an op whose kernels apply epilogues becomes that op's ("quant", grid) step.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from engine.errors import ModelError
from engine.model.ir import Graph, Op, Quantization, Tensor
from engine.model.op_specs import SPECS
from engine.reference import quantized
from engine.reference.quantized.params import dequantize
from engine.transforms.base import PassResult, sole_consumer, with_attrs

# Ops whose integer outputs are the inputs' values on the same grid (no rounding), those
# that only move values, those whose GPU kernels (and the reference's fused.py) apply
# epilogue steps: engine/model/op_specs.py.
MOVES = {name for name, spec in SPECS.items() if spec.moves}
GRID_PRESERVING = MOVES | {name for name, spec in SPECS.items() if spec.same_grid}
EPILOGUE_OPS = {name for name, spec in SPECS.items() if spec.epilogue}
INT_TYPES = ("int8", "uint8")


def is_quantized_graph(graph: Graph) -> bool:
    """Any integer activation or quantized constant: to_float has work to do."""
    return any(quantized.quantized_tensors(op, graph) for op in graph.ops)


def to_float(graph: Graph) -> Graph:
    """The float (fake-quant) form of a quantized graph; a float graph comes back as is."""
    if not is_quantized_graph(graph):
        return graph
    where = graph.name or "<graph>"
    _check_ops(graph, where)
    tensors = [_float_tensor(t, i, graph, where) for i, t in enumerate(graph.tensors)]
    ops: list[Op] = []
    for i, op in enumerate(graph.ops):
        out = graph.tensors[op.outputs[0]] if op.outputs else None
        if op.type in quantized.QUANT_OPS or not _needs_rounding(op, graph, out, where, i):
            ops.append(op)
            continue
        # op -> raw (float, no grid) -> QUANTIZE -> the op's old output (on its grid)
        raw = len(tensors)
        tensors.append(Tensor(f"{out.name}/float", out.shape, "float32"))
        ops.append(replace(op, outputs=(raw, *op.outputs[1:])))
        ops.append(Op("QUANTIZE", (raw,), (op.outputs[0],)))
    return Graph(tensors, ops, list(graph.inputs), list(graph.outputs), graph.name)


def _check_ops(graph: Graph, where: str) -> None:
    supported = quantized.supported("quantized")
    for i, op in enumerate(graph.ops):
        kind = quantized.mode(op, graph)
        if kind == "quantized" and op.type not in supported:
            t = quantized.quantized_tensors(op, graph)[0]
            raise ModelError(
                f"{where}: op #{i} {op.type}: quantized tensor {t.name!r} ({t.dtype}); the "
                f"engine has no quantized {op.type}"
            )


def _float_tensor(t: Tensor, index: int, graph: Graph, where: str) -> Tensor:
    if quantized.is_quantized_constant(t):
        return Tensor(t.name, t.shape, "float32", dequantize(t.data, t))
    if not quantized.is_integer_activation(t):
        return t
    if t.dtype not in INT_TYPES:
        raise ModelError(
            f"{where}: tensor {t.name!r} ({_user(graph, index)}) is {t.dtype}; the engine runs "
            "int8/uint8 activations (16x8 quantization is not supported)"
        )
    q = t.quantization
    if q is None or len(q.scale) != 1:
        what = "no quantization" if q is None else f"{len(q.scale)} scales (per channel)"
        raise ModelError(
            f"{where}: activation {t.name!r} ({_user(graph, index)}, {t.dtype}) has {what}; "
            "the engine needs one scale and zero point per activation"
        )
    return Tensor(t.name, t.shape, "float32", None, replace(q, dtype=t.dtype))


def _user(graph: Graph, t: int) -> str:
    for i, op in enumerate(graph.ops):
        if t in op.inputs or t in op.outputs:
            return f"op #{i} {op.type}"
    return "graph input/output"


def _grid(t: Tensor | None) -> tuple | None:
    if t is None or t.quantization is None or t.is_constant:
        return None
    return (t.quantization.scale, t.quantization.zero_point)


def _needs_rounding(op: Op, graph: Graph, out: Tensor | None, where: str, i: int) -> bool:
    """Whether `op`'s float result must be put back on its output's grid."""
    if not quantized.is_integer_activation(out):
        return False
    if op.type not in GRID_PRESERVING:
        return True
    grids = {_grid(graph.tensors[t]) for t in op.inputs if t >= 0} - {None}
    if grids <= {_grid(out)}:
        return False
    if op.type in MOVES:
        raise ModelError(
            f"{where}: op #{i} {op.type} copies integers onto another grid (LiteRT "
            "reinterprets them); the float path cannot express it"
        )
    return True


def fuse_quantize(graph: Graph) -> tuple[Graph, PassResult]:
    """QUANTIZE (float -> float) after an epilogue-capable op -> its ("quant", grid) step."""
    result = PassResult("fuse_quantize")
    producers = graph.producers()
    i = 0
    while i < len(graph.ops):
        op = graph.ops[i]
        src = op.inputs[0] if op.type == "QUANTIZE" and op.inputs else -1
        p = producers.get(src)
        dst = graph.tensors[op.outputs[0]] if op.type == "QUANTIZE" else None
        if (
            p is None
            or dst is None
            or dst.dtype != "float32"
            or graph.tensors[src].dtype != "float32"
            or dst.quantization is None
            or graph.ops[p].type not in EPILOGUE_OPS
            or len(graph.ops[p].outputs) != 1
            or sole_consumer(graph, src) != i
        ):
            i += 1
            continue
        prod = graph.ops[p]
        steps = (*prod.attrs.get("epilogue", ()), ("quant", dst.quantization))
        fused = replace(with_attrs(prod, epilogue=steps), outputs=op.outputs)
        ops = [fused if k == p else o for k, o in enumerate(graph.ops) if k != i]
        graph = Graph(graph.tensors, ops, list(graph.inputs), list(graph.outputs), graph.name)
        producers = graph.producers()
        result.applied += 1
    return graph, result


def grid_step(q: Quantization) -> tuple[float, int, int, int]:
    """(scale, zero point, lowest, highest level) of a fake-quant grid."""
    lo, hi = (-128, 127) if (q.dtype or "int8") == "int8" else (0, 255)
    return float(np.float32(q.scale[0])), int(q.zero_point[0]), lo, hi
