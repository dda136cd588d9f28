"""Graph IR: tensors, ops and the graph that orders them.

The contract every other part of the engine reads:
- a Tensor has a name, a shape, a numpy dtype name and optional constant data;
- an Op has a type ("CONV_2D", or a custom code such as
  "Convolution2DTransposeBias"), input/output tensor ids (-1 = optional input
  left out) and typed attributes (ints, floats, bools, strings, int tuples);
- a Graph lists tensors and ops in execution order plus its inputs/outputs.

Attribute names are the TFLite schema's field names in snake_case
("stride_w", "fused_activation_function"); enum fields hold their name
("SAME", "RELU6"), not the schema's integer.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Quantization:
    """Affine quantization: real = scale * (q - zero_point), per axis when len > 1."""

    scale: tuple[float, ...]
    zero_point: tuple[int, ...]
    axis: int = 0
    # The integer type of the grid ("int8", "uint8") when a float tensor keeps the
    # quantization of the integer tensor it replaces (a fake-quant graph,
    # engine/transforms/quantized.py); "" on integer tensors, whose dtype says it.
    dtype: str = ""


@dataclass(frozen=True, eq=False)
class Tensor:
    name: str
    shape: tuple[int, ...]
    dtype: str  # numpy dtype name: "float32", "int32", "float16", "int8", ...
    data: np.ndarray | None = None  # constant contents, shaped like `shape`
    quantization: Quantization | None = None
    # TFLite's shape_signature: `shape` with -1 where a dimension is dynamic (e.g. a batch
    # left open at conversion); None when the file has none (every dimension fixed).
    # Shapes derived from a dynamic one are placeholders until propagated
    # (engine/transforms/resize_inputs.py).
    signature: tuple[int, ...] | None = None

    @property
    def is_dynamic(self) -> bool:
        return self.signature is not None and any(d < 0 for d in self.signature)

    @property
    def is_constant(self) -> bool:
        return self.data is not None

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def nbytes(self) -> int:
        return self.size * np.dtype(self.dtype).itemsize


@dataclass(frozen=True, eq=False)
class Op:
    type: str
    inputs: tuple[int, ...]
    outputs: tuple[int, ...]
    attrs: dict[str, Any] = field(default_factory=dict)
    custom: bool = False  # True for CUSTOM ops: `type` is then the custom code
    custom_options: bytes = b""  # raw custom options, kept for the writer


@dataclass(eq=False)
class Graph:
    tensors: list[Tensor]
    ops: list[Op]
    inputs: list[int]
    outputs: list[int]
    name: str = ""  # where it came from (file path), for error messages
    # consumers() of the ops it was built from: the fusion passes ask once per candidate
    # op, and rebuilding it each time made the transforms quadratic in the op count.
    _readers: tuple = field(default=(None, None), init=False, repr=False, compare=False)

    def tensor(self, index: int) -> Tensor:
        return self.tensors[index]

    def consumers(self) -> Mapping[int, tuple[int, ...]]:
        """Map tensor id -> indices of the ops that read it, in order (read-only).

        Kept until `ops` changes: Ops are frozen and compare by identity (eq=False), so a
        pass that replaces, adds or drops an op, in a new Graph or in this one's list, gets
        a new map. An op's `attrs` dict is not edited in place once a graph is built (passes
        make a new Op: transforms/base.with_attrs), or the kept map could be stale."""
        ops = tuple(self.ops)
        kept_ops, kept = self._readers
        if kept_ops == ops:
            return MappingProxyType(kept)
        found: dict[int, list[int]] = {}
        for i, op in enumerate(ops):
            for t in tensors_read(op):
                found.setdefault(t, []).append(i)
        self._readers = (ops, {t: tuple(r) for t, r in found.items()})  # picklable
        return MappingProxyType(self._readers[1])

    def producers(self) -> dict[int, int]:
        """Map tensor id -> index of the op that writes it."""
        return {t: i for i, op in enumerate(self.ops) for t in op.outputs}

    def intermediates(self) -> list[int]:
        """Tensors written by an op that are not graph outputs."""
        outs = set(self.outputs)
        return [t for op in self.ops for t in op.outputs if t not in outs]

    def op_histogram(self) -> dict[str, int]:
        hist: dict[str, int] = {}
        for op in self.ops:
            hist[op.type] = hist.get(op.type, 0) + 1
        return dict(sorted(hist.items(), key=lambda kv: (-kv[1], kv[0])))


# Epilogue steps whose argument is not a tensor id: an activation name, a Quantization
# (fake quantization to a grid, engine/transforms/quantized.py).
VALUE_STEPS = ("act", "quant")


def tensors_read(op: Op) -> list[int]:
    """Every tensor an op reads: its inputs, epilogue operands and input scale (fusion)."""
    extra = [arg for kind, arg in op.attrs.get("epilogue", ()) if kind not in VALUE_STEPS]
    if "input_scale" in op.attrs:
        extra.append(op.attrs["input_scale"])
    return [t for t in op.inputs if t >= 0] + extra


def compact(graph: Graph) -> Graph:
    """Drop tensors nothing uses (ops, epilogues, graph I/O) and renumber the rest in order."""
    used = {t for op in graph.ops for t in tensors_read(op) + list(op.outputs)}
    used |= set(graph.inputs) | set(graph.outputs)
    new_id = {old: new for new, old in enumerate(sorted(used))}

    def remap(ids) -> tuple[int, ...]:
        return tuple(new_id[t] if t >= 0 else -1 for t in ids)

    ops = []
    for op in graph.ops:
        attrs = op.attrs
        if "epilogue" in attrs:
            steps = tuple((k, a if k in VALUE_STEPS else new_id[a]) for k, a in attrs["epilogue"])
            attrs = {**attrs, "epilogue": steps}
        if "input_scale" in attrs:
            attrs = {**attrs, "input_scale": new_id[attrs["input_scale"]]}
        ops.append(
            Op(op.type, remap(op.inputs), remap(op.outputs), attrs, op.custom, op.custom_options)
        )
    return Graph(
        tensors=[graph.tensors[t] for t in sorted(used)],
        ops=ops,
        inputs=list(remap(graph.inputs)),
        outputs=list(remap(graph.outputs)),
        name=graph.name,
    )


def graphs_equal(a: Graph, b: Graph) -> list[str]:
    """Differences between two graphs (empty list when equal); used by round-trip tests."""
    diffs: list[str] = []
    if len(a.tensors) != len(b.tensors):
        return [f"tensor count {len(a.tensors)} != {len(b.tensors)}"]
    if len(a.ops) != len(b.ops):
        return [f"op count {len(a.ops)} != {len(b.ops)}"]
    if a.inputs != b.inputs or a.outputs != b.outputs:
        diffs.append("graph inputs/outputs differ")
    for i, (x, y) in enumerate(zip(a.tensors, b.tensors, strict=True)):
        same = (x.name, x.shape, x.dtype, x.quantization, x.signature) == (
            y.name,
            y.shape,
            y.dtype,
            y.quantization,
            y.signature,
        )
        if not same:
            diffs.append(f"tensor {i} ({x.name}) metadata differs")
        elif (x.data is None) != (y.data is None):
            diffs.append(f"tensor {i} ({x.name}) constness differs")
        elif x.data is not None and not np.array_equal(x.data, y.data):
            diffs.append(f"tensor {i} ({x.name}) data differs")
    for i, (p, q) in enumerate(zip(a.ops, b.ops, strict=True)):
        if (p.type, p.inputs, p.outputs, p.custom) != (q.type, q.inputs, q.outputs, q.custom):
            diffs.append(f"op {i} ({p.type}) structure differs")
        elif p.attrs != q.attrs:
            diffs.append(f"op {i} ({p.type}) attrs differ: {p.attrs} != {q.attrs}")
    return diffs
