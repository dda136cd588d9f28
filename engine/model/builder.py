"""The one graph builder: tests, the latency generator, the tools and the harnesses build
their graphs with it.

Tensors are ids in build order; an op's output shape comes from the op table's shape rule
(engine/model/op_specs.py output_shapes) unless given.

    b = GraphBuilder("example")
    x = b.tensor((1, 8, 8, 3), name="input")              # float32, not constant
    w, bias = b.const(weights), b.const(np.zeros(4, np.float32))
    y = b.op("CONV_2D", (x, w, bias), padding="SAME", stride_w=1, stride_h=1)
    r = b.op("RESHAPE", (y, b.const(np.array([1, 256], np.int32))), (1, 256))
    graph = b.graph([x], [r])
Unnamed tensors are called "t<id>". Several outputs: make their tensors, then `add_op`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from engine.model.ir import Graph, Op, Quantization, Tensor
from engine.model.op_specs import output_shapes


class GraphBuilder:
    def __init__(self, name: str = "") -> None:
        self.name = name  # the graph's, unless graph() is given one
        self.tensors: list[Tensor] = []
        self.ops: list[Op] = []

    def add_tensor(self, tensor: Tensor) -> int:
        """A tensor made elsewhere, as it is."""
        self.tensors.append(tensor)
        return len(self.tensors) - 1

    def tensor(
        self,
        shape: Sequence[int],
        data: np.ndarray | None = None,
        name: str | None = None,
        *,
        dtype: str | None = None,
        quantization: Quantization | None = None,
    ) -> int:
        """A tensor of `shape`: dtype float32, or the data's when `data` is given."""
        if dtype is None:
            dtype = "float32" if data is None else np.asarray(data).dtype.name
        name = name or f"t{len(self.tensors)}"
        return self.add_tensor(
            Tensor(name, tuple(int(d) for d in shape), dtype, data, quantization)
        )

    def const(self, data, name: str | None = None, quantization: Quantization | None = None) -> int:
        """A constant holding `data` (its shape and dtype)."""
        data = np.asarray(data)
        return self.tensor(data.shape, data, name, quantization=quantization)

    def shape(self, t: int) -> tuple[int, ...]:
        return self.tensors[t].shape

    def op(
        self,
        op_type: str,
        inputs: Sequence[int],
        shape: Sequence[int] | None = None,
        *,
        name: str | None = None,
        dtype: str = "float32",
        **attrs,
    ) -> int:
        """An op with one output, returned; its shape from the op table's rule when None."""
        if shape is None:
            shape = self.output_shape(op_type, inputs, attrs)
        out = self.tensor(shape, name=name, dtype=dtype)
        self.add_op(Op(op_type, tuple(inputs), (out,), attrs))
        return out

    def output_shape(self, op_type: str, inputs: Sequence[int], attrs: dict) -> tuple[int, ...]:
        """The op table's shape of the first output (ValueError where it has no rule)."""
        ins = [self.tensors[t] if t >= 0 else None for t in inputs]
        shapes = [None if t is None else t.shape for t in ins]
        outs = output_shapes(op_type, attrs, shapes, [None if t is None else t.data for t in ins])
        if outs is None:
            raise ValueError(f"{op_type}: the op table has no shape rule for it; give the shape")
        return tuple(outs[0])

    def add_op(self, op: Op) -> None:
        """An op whose outputs are tensors already made."""
        self.ops.append(op)

    def graph(
        self, inputs: Sequence[int], outputs: Sequence[int], name: str | None = None
    ) -> Graph:
        """The graph so far, with these inputs and outputs."""
        name = self.name if name is None else name
        return Graph(list(self.tensors), list(self.ops), list(inputs), list(outputs), name)
