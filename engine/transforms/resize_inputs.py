"""Fix the graph's input shapes and propagate shapes through every op, as LiteRT's
resize_tensor_input + AllocateTensors.

A model converted with a dynamic dimension (a -1 in a tensor's shape_signature, e.g. the
batch) stores placeholder shapes for everything derived from it (a [432, 16] reshape
target may be written as [1, 1]). So shapes are recomputed, op by op, from the inputs:
1. each input gets the shape asked for (`input_shapes`: only its -1 dimensions may
   change) or the shape the file gives;
2. per op: if every input's value is known (constants, SHAPE of a known shape, and what
   those feed), the reference kernel computes the outputs' values, hence their shapes;
   else a shape rule (element-wise, conv, pool, fully connected) gives the output shapes;
   else the reference kernel runs on zeros of the input shapes (data movement: cheap).
Values are used for shapes only; engine/transforms/fold_shapes.py then folds them.
Usage: resize_inputs(load_tflite(path), {"image": (4, 24, 24, 3)})
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

import numpy as np

from engine.errors import ModelError
from engine.model.ir import Graph, Op
from engine.reference import registry
from engine.reference.padding import out_size

Shape = tuple[int, ...]

_SAME_SHAPE = {
    "RELU", "RELU6", "RELU_N1_TO_1", "LOGISTIC", "TANH", "HARD_SWISH", "ELU", "LEAKY_RELU",
    "GELU", "NEG", "RSQRT", "SOFTMAX", "LAYER_NORM",
}  # fmt: skip
_BROADCAST = {"ADD", "SUB", "MUL", "DIV", "MAXIMUM", "MINIMUM", "SQUARED_DIFFERENCE", "PRELU"}
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
        except (ModelError, ValueError, IndexError, KeyError) as exc:
            msg = f"{graph.name}: op #{i} {op.type}: shapes do not propagate: {exc}"
            raise ModelError(msg) from None
        for t, s in zip(op.outputs, out_shapes, strict=True):
            shapes[t] = tuple(int(d) for d in s)
    tensors = [
        replace(tensor, shape=shapes[t]) if t in shapes and shapes[t] != tensor.shape else tensor
        for t, tensor in enumerate(graph.tensors)
    ]
    return Graph(tensors, list(graph.ops), list(graph.inputs), list(graph.outputs), graph.name)


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
    rule = _rule(op, [shapes[t] if t >= 0 else None for t in op.inputs])
    if rule is not None:
        return rule
    if fn is None:
        raise ModelError("no reference kernel to find its output shapes")
    args = [
        None if t < 0 else values[t] if t in values
        else np.zeros(shapes[t], graph.tensors[t].dtype)
        for t in op.inputs
    ]  # fmt: skip
    return [np.shape(v) for v in fn(op, args)]


def _small(op: Op, shapes: dict) -> bool:
    return all(int(np.prod(shapes[t])) <= MAX_VALUE_ELEMENTS for t in op.inputs if t >= 0)


def _rule(op: Op, ins: list[Shape | None]) -> list[Shape] | None:
    """Output shapes of the ops whose reference kernels are costly on zeros, or None."""
    a = op.attrs
    if op.type in _SAME_SHAPE:
        return [ins[0]]
    if op.type in _BROADCAST:
        return [tuple(np.broadcast_shapes(*[s for s in ins if s is not None]))]
    if op.type in ("CONV_2D", "DEPTHWISE_CONV_2D", "MAX_POOL_2D", "AVERAGE_POOL_2D"):
        if "explicit_padding" in a:
            return None  # transform-made; resize runs before transforms
        b, h, w, c = ins[0]
        if op.type.endswith("POOL_2D"):
            kh, kw, dh, dw, cout = a["filter_height"], a["filter_width"], 1, 1, c
        else:  # weights: conv [O, kh, kw, I], depthwise [1, kh, kw, C * M]
            o, kh, kw, m = ins[1]
            dh, dw = a.get("dilation_h_factor", 1), a.get("dilation_w_factor", 1)
            cout = o if op.type == "CONV_2D" else m
        pad = a.get("padding", "VALID")
        oh = out_size(pad, h, kh, a.get("stride_h", 1), dh)
        ow = out_size(pad, w, kw, a.get("stride_w", 1), dw)
        return [(b, oh, ow, cout)]
    if op.type == "FULLY_CONNECTED":
        units, depth = ins[1]
        if a.get("keep_num_dims", False):
            return [(*ins[0][:-1], units)]
        return [(int(np.prod(ins[0])) // depth, units)]
    return None
