"""Fix the graph's input shapes and propagate shapes through every op, as LiteRT's
resize_tensor_input + AllocateTensors.

A model converted with a dynamic dimension (a -1 in a tensor's shape_signature, e.g. the
batch) stores placeholder shapes for everything derived from it (a [432, 16] reshape
target may be written as [1, 1]). So shapes are recomputed, op by op, from the inputs:
1. each input gets the shape asked for (`input_shapes`: only its -1 dimensions may
   change) or the shape the file gives;
2. per op: if every input's value is known (constants, SHAPE of a known shape, and what
   those feed), the reference kernel computes the outputs' values, hence their shapes;
   else the op table's shape rule gives the output shapes, or where it has none the
   reference kernel runs on zeros of the input shapes (engine/reference/registry.py
   output_types; data movement: cheap).
Values are used for shapes only; engine/transforms/fold_shapes.py then folds them.
Usage: resize_inputs(load_tflite(path), {"image": (4, 24, 24, 3)}); rebatch(graph, 4) for a
model of batch 1 whose ops carry any batch (the crops of one frame as one run).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

import numpy as np

from engine.errors import ModelError
from engine.model.ir import Graph, Op
from engine.model.op_specs import Invalid
from engine.reference import registry

Shape = tuple[int, ...]

MAX_VALUE_ELEMENTS = 1 << 16  # values tracked through known-input ops (shape arithmetic)


def has_dynamic_shapes(graph: Graph) -> bool:
    """Some tensor has a dynamic (-1) dimension in its shape signature."""
    return any(t.is_dynamic for t in graph.tensors)


def resize_inputs(graph: Graph, input_shapes: Mapping[str, Sequence[int]] | None = None) -> Graph:
    """A copy of `graph` with the given input shapes and every op's shapes propagated."""
    shapes: dict[int, Shape] = {}
    values: dict[int, np.ndarray] = {}
    for t, tensor in enumerate(graph.tensors):
        if tensor.is_constant:
            shapes[t], values[t] = tensor.shape, tensor.data
    wanted = dict(input_shapes or {})
    for t in graph.inputs:
        tensor = graph.tensors[t]
        shapes[t] = _input_shape(graph, t, wanted.pop(tensor.name, None))
    if wanted:
        names = [graph.tensors[t].name for t in graph.inputs]
        raise ValueError(f"input_shapes: no graph input named {sorted(wanted)} (inputs: {names})")
    for i, op in enumerate(graph.ops):
        try:
            out_shapes = _propagate(op, shapes, values, graph)
        except (ModelError, Invalid, ValueError, IndexError, KeyError) as exc:
            msg = f"{graph.name}: op #{i} {op.type}: shapes do not propagate: {exc}"
            raise ModelError(msg) from None
        for t, s in zip(op.outputs, out_shapes, strict=True):
            shapes[t] = tuple(int(d) for d in s)
    tensors = [
        replace(tensor, shape=shapes[t]) if t in shapes and shapes[t] != tensor.shape else tensor
        for t, tensor in enumerate(graph.tensors)
    ]
    return Graph(tensors, list(graph.ops), list(graph.inputs), list(graph.outputs), graph.name)


def rebatch(graph: Graph, n: int) -> Graph:
    """`graph` on n images at once: every input's batch of 1 becomes n and every shape is
    propagated (LiteRT's resize_tensor_input of the batch). ModelError where the model does
    not carry the batch through: an input's batch is not 1, the shapes do not propagate
    (a reshape to a fixed [1, ...]), or an output's first dimension is not then n."""
    if n < 1:
        raise ValueError(f"rebatch: a batch of {n}")
    tensors = list(graph.tensors)
    wanted = {}
    for t in graph.inputs:
        x = tensors[t]
        if not x.shape or x.shape[0] != 1 or (x.signature and x.signature[0] > 1):
            raise ModelError(f"{graph.name}: input {x.name!r} {list(x.shape)} has no batch of 1")
        tensors[t] = replace(x, signature=(-1, *(x.signature or x.shape)[1:]))
        wanted[x.name] = (n, *x.shape[1:])
    opened = Graph(tensors, list(graph.ops), list(graph.inputs), list(graph.outputs), graph.name)
    batched = resize_inputs(opened, wanted)
    for t in batched.outputs:
        y = batched.tensors[t]
        if n > 1 and (not y.shape or y.shape[0] != n):
            raise ModelError(f"{graph.name}: output {y.name!r} is {list(y.shape)} at a batch of "
                             f"{n}: the model does not carry the batch")  # fmt: skip
    return batched


def _input_shape(graph: Graph, t: int, asked: Sequence[int] | None) -> Shape:
    tensor = graph.tensors[t]
    if asked is None:
        return tensor.shape
    asked = tuple(int(d) for d in asked)
    signature = tensor.signature if tensor.signature is not None else tensor.shape
    if len(asked) != len(signature) or any(d <= 0 for d in asked):
        raise ValueError(f"input {tensor.name!r}: shape {asked} does not fit {list(signature)}")
    fixed = [k for k, (a, s) in enumerate(zip(asked, signature, strict=True)) if s >= 0 and a != s]
    if fixed:
        raise ValueError(
            f"input {tensor.name!r}: dimension(s) {fixed} of {list(signature)} are fixed in the "
            f"model; only -1 (dynamic) dimensions can be resized, asked {list(asked)}"
        )
    return asked


def _propagate(op: Op, shapes: dict, values: dict, graph: Graph) -> list[Shape]:
    ins = [t for t in op.inputs if t >= 0]
    fn = registry.kernel(op.type)
    if op.type == "SHAPE" or (
        fn is not None and ins and all(t in values for t in ins) and _small(op, shapes)
    ):
        args = [
            None if t < 0 else values.get(t, np.broadcast_to(np.uint8(0), shapes[t]))
            for t in op.inputs
        ]
        outs = [np.asarray(v) for v in fn(op, args)]
        if all(v.size <= MAX_VALUE_ELEMENTS for v in outs):
            values.update(zip(op.outputs, outs, strict=True))
        return [v.shape for v in outs]
    inputs = [
        None if t < 0 else replace(graph.tensors[t], shape=shapes[t], data=values.get(t))
        for t in op.inputs
    ]
    return [shape for shape, _ in registry.output_types(op, inputs)]


def _small(op: Op, shapes: dict) -> bool:
    return all(int(np.prod(shapes[t])) <= MAX_VALUE_ELEMENTS for t in op.inputs if t >= 0)
