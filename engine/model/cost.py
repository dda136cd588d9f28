"""Static figures of a graph: parameters, FLOPs per op, intermediate tensor bytes.

FLOPs count a multiply-add as 2, as TFLite's benchmark tools and papers do:
- conv: 2 * output elements * kernel_h * kernel_w * input channels
- depthwise: 2 * output elements * kernel_h * kernel_w
- transpose conv: 2 * input elements * kernel_h * kernel_w * output channels
- fully connected: 2 * output elements * input features
- pooling: output elements * window size; everything else: output elements
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.model.ir import Graph, Op


@dataclass(frozen=True)
class OpFlops:
    index: int
    type: str
    output: str
    flops: int


def _elems(shape: tuple[int, ...]) -> int:
    return int(np.prod(shape, dtype=np.int64))


def op_flops(graph: Graph, op: Op) -> int:
    """FLOPs of one op (multiply-add = 2)."""
    out = graph.tensors[op.outputs[0]].shape if op.outputs else ()
    shape = lambda i: graph.tensors[op.inputs[i]].shape  # noqa: E731
    if op.type == "CONV_2D":
        _, kh, kw, cin = shape(1)
        return 2 * _elems(out) * kh * kw * cin
    if op.type == "DEPTHWISE_CONV_2D":
        _, kh, kw, _ = shape(1)
        return 2 * _elems(out) * kh * kw
    if op.type == "DEPTHWISE_CONV_1X1":  # fused (engine/transforms/fuse_depthwise.py)
        _, kh, kw, cin = shape(1)
        pixels = _elems(out[:-1])
        return 2 * pixels * cin * kh * kw + 2 * _elems(out) * cin
    if op.type == "TRANSPOSE_CONV":
        cout, kh, kw, _ = shape(1)
        return 2 * _elems(shape(2)) * kh * kw * cout
    if op.type == "Convolution2DTransposeBias":
        cout, kh, kw, _ = shape(1)
        return 2 * _elems(shape(0)) * kh * kw * cout
    if op.type == "FULLY_CONNECTED":
        return 2 * _elems(out) * shape(1)[-1]
    if op.type in ("MAX_POOL_2D", "AVERAGE_POOL_2D"):
        return _elems(out) * op.attrs["filter_height"] * op.attrs["filter_width"]
    if op.type == "MEAN":
        return _elems(shape(0))
    return _elems(out)


def flops_by_op(graph: Graph) -> list[OpFlops]:
    rows = []
    for i, op in enumerate(graph.ops):
        name = graph.tensors[op.outputs[0]].name if op.outputs else ""
        rows.append(OpFlops(i, op.type, name, op_flops(graph, op)))
    return rows


def parameter_count(graph: Graph) -> int:
    """Elements of the float constants (weights, biases, PReLU slopes)."""
    return sum(t.size for t in graph.tensors if t.is_constant and t.dtype.startswith("float"))


def intermediate_bytes(graph: Graph) -> int:
    """Bytes of all tensors ops write that are not graph outputs, stored as in the IR."""
    return sum(graph.tensors[t].nbytes for t in graph.intermediates())
