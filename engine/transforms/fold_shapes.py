"""Fold what is known at load into constants: shape arithmetic above all.

A model converted with a dynamic batch computes its reshape targets at run time:
SHAPE(x) -> STRIDED_SLICE / GATHER -> REDUCE_PROD -> EXPAND_DIMS / PACK / CONCATENATION
-> RESHAPE's shape input, on int32 tensors the GPU does not store. Once every shape is
fixed (always, after engine/transforms/resize_inputs.py), those values are constants:
- SHAPE of any tensor -> its shape;
- any op whose inputs are all constants -> its outputs, computed by its reference kernel
  (exact for the integer shape ops; float ops give what the reference, checked against
  LiteRT, gives).
Declined: the op writes a graph output (the engine runs ops, it does not return
constants), its kernel rejects the values, or the value's shape is not the declared one
(a dynamic graph whose shapes were never propagated).
"""

from __future__ import annotations

import numpy as np

from engine.errors import ModelError
from engine.model.ir import Graph, Op, Tensor
from engine.reference import registry
from engine.transforms.base import PassResult

MAX_FOLDED_ELEMENTS = 1 << 22  # 16 MiB of float32: folding never builds a huge constant


def _value(graph: Graph, op: Op) -> list[np.ndarray] | str | None:
    """The op's outputs when known at load, a reason when it cannot be folded, or None."""
    tensors = graph.tensors
    if op.type == "SHAPE":
        return registry.kernel("SHAPE")(
            op, [np.broadcast_to(np.uint8(0), tensors[op.inputs[0]].shape)]
        )
    inputs = [t for t in op.inputs if t >= 0]
    if not inputs or not all(tensors[t].is_constant for t in inputs):
        return None
    fn = registry.kernel(op.type)
    if fn is None:
        return "no reference kernel"
    if any(tensors[t].size > MAX_FOLDED_ELEMENTS for t in op.outputs):
        return f"output over {MAX_FOLDED_ELEMENTS} elements"
    try:
        return fn(op, [tensors[t].data if t >= 0 else None for t in op.inputs])
    except (ModelError, ValueError, IndexError) as exc:
        return str(exc)


def fold_shapes(graph: Graph) -> tuple[Graph, PassResult]:
    result = PassResult("fold_shapes")
    tensors = list(graph.tensors)
    kept: list[Op] = []
    for i, op in enumerate(graph.ops):
        g = Graph(tensors, kept, graph.inputs, graph.outputs, graph.name)
        values = _value(g, op)
        if values is None:
            kept.append(op)
            continue
        why = values if isinstance(values, str) else None
        if why is None and any(t in graph.outputs for t in op.outputs):
            why = "writes a graph output"
        if why is None:
            for t, v in zip(op.outputs, values, strict=True):
                if tuple(np.shape(v)) != tensors[t].shape:
                    why = f"value shape {np.shape(v)} != declared {tensors[t].shape}"
        if why:
            result.declined.append(f"#{i} {op.type}: {why}")
            kept.append(op)
            continue
        for t, v in zip(op.outputs, values, strict=True):
            old = tensors[t]
            v = np.asarray(v, dtype=old.dtype)
            tensors[t] = Tensor(old.name, old.shape, old.dtype, v, old.quantization)
        result.applied += 1
    return Graph(tensors, kept, list(graph.inputs), list(graph.outputs), graph.name), result
