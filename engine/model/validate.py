"""Check a graph read from a file before any other part of the engine reads it.

The importer (engine/model/importer.py) calls `validate()` after parsing and before
folding constants; nothing has been computed or allocated yet. Checks, in order:
1. tensors: rank <= MAX_RANK, every dimension >= 0, at most MAX_ELEMENTS elements, a
   shape signature of the same rank whose fixed dimensions match the shape;
2. graph inputs and outputs: in range, inputs neither constant nor written by an op,
   outputs written by an op (or graph inputs; checked after the ops);
3. per op, in order: tensor ids in range (-1 only where the op allows an input to be
   left out), outputs written once and never constants, every input that is not a
   constant written by a graph input or an earlier op;
4. per op, whatever its type: float options finite, strides / dilations / window and
   block sizes >= 1, padding SAME or VALID;
5. per op with an entry in engine/model/op_specs.py: arity, the type class and rank of
   each input, the option fields its kernels read (padding, strides, activation), and,
   when every shape is fixed, the declared output shapes against the ones its inputs give.
Each failure is a one-line ModelError naming the file, the op (index, type) or the tensor,
and what is wrong.
"""

from __future__ import annotations

import math

from engine.errors import ModelError
from engine.model.ir import Graph, Op
from engine.model.op_specs import (
    ACTIVATIONS,
    CLASSES,
    PADDINGS,
    SPECS,
    Invalid,
    OpSpec,
    output_shapes,
)

# TFLite's kernels handle rank <= 6 (reshape, transpose, strided slice); 8 leaves room.
MAX_RANK = 8
# The WGSL kernels index elements with 32-bit integers.
MAX_ELEMENTS = 2**31 - 1
# Integer options that count or step (0 or less divides by zero or loops forever).
POSITIVE_OPTIONS = ("stride_w", "stride_h", "dilation_w_factor", "dilation_h_factor",
                    "filter_width", "filter_height", "block_size", "num_splits")  # fmt: skip


def validate(graph: Graph) -> None:
    """ModelError for the first problem found (see the module docstring)."""
    name = graph.name or "<graph>"
    for t in range(len(graph.tensors)):
        _check_tensor(graph, t)
    _check_graph_io(graph, name)
    dynamic = any(t.is_dynamic for t in graph.tensors)
    written = set(graph.inputs)
    for i, op in enumerate(graph.ops):
        where = f"{name}: op #{i} {op.type}"
        spec = SPECS.get(op.type)
        _check_refs(graph, op, spec, written, where)
        _check_options(op, where)
        if spec is not None:
            try:
                _check_op(graph, op, spec, dynamic)
            except Invalid as exc:
                raise ModelError(f"{where}: {exc}") from None
        written.update(op.outputs)
    for t in graph.outputs:
        if t not in written:
            raise ModelError(f"{name}: graph output {_describe(graph, t)} is never written")


def _describe(graph: Graph, t: int) -> str:
    """The tensor as "tensor 12 'conv1' [1, 96, 96, 16]", with the first op using it."""
    tensor = graph.tensors[t]
    users = [f"op #{i} {op.type}" for i, op in enumerate(graph.ops) if t in op.inputs + op.outputs]
    used = f" ({users[0]})" if users else ""
    return f"tensor {t} '{tensor.name}' {list(tensor.shape)}{used}"


def _check_tensor(graph: Graph, t: int) -> None:
    tensor, name = graph.tensors[t], graph.name or "<graph>"
    shape = tensor.shape
    problem = ""
    if len(shape) > MAX_RANK:
        problem = f"has rank {len(shape)} (at most {MAX_RANK})"
    elif any(d < 0 for d in shape):
        problem = "has a negative dimension"
    elif math.prod(shape) > MAX_ELEMENTS:
        problem = f"has {math.prod(shape):,} elements (at most {MAX_ELEMENTS:,})"
    elif tensor.signature is not None:
        sig = tensor.signature
        if len(sig) != len(shape) or any(
            s < -1 or (s >= 0 and s != d) for s, d in zip(sig, shape, strict=False)
        ):
            problem = f"has shape signature {list(sig)} that does not fit its shape"
    if problem:
        raise ModelError(f"{name}: {_describe(graph, t)} {problem}")


def _check_graph_io(graph: Graph, name: str) -> None:
    n = len(graph.tensors)
    for kind, ids in (("input", graph.inputs), ("output", graph.outputs)):
        for t in ids:
            if not 0 <= t < n:
                raise ModelError(f"{name}: graph {kind} refers to missing tensor {t} (of {n})")
    writers = {t for op in graph.ops for t in op.outputs}
    if len(set(graph.inputs)) != len(graph.inputs):
        raise ModelError(f"{name}: a tensor is listed twice as a graph input")
    for t in graph.inputs:
        if graph.tensors[t].is_constant or t in writers:
            what = "a constant" if graph.tensors[t].is_constant else "written by an op"
            raise ModelError(f"{name}: graph input {_describe(graph, t)} is {what}")


def _check_refs(graph: Graph, op: Op, spec: OpSpec | None, written: set[int], where: str) -> None:
    n = len(graph.tensors)
    for k, t in enumerate(op.inputs):
        if t == -1 and (spec is None or k in spec.optional):
            continue
        if t == -1:
            raise ModelError(f"{where}: input {k} is left out (-1) but the op needs it")
        if not 0 <= t < n:
            raise ModelError(f"{where}: input {k} refers to missing tensor {t} (of {n})")
        if t not in written and not graph.tensors[t].is_constant:
            raise ModelError(
                f"{where}: input {k} {_describe(graph, t)} is read before any op writes it"
            )
    for k, t in enumerate(op.outputs):
        if not 0 <= t < n:
            raise ModelError(f"{where}: output {k} refers to missing tensor {t} (of {n})")
        tensor = graph.tensors[t]
        if t in written or tensor.is_constant:
            what = "a constant" if tensor.is_constant else "already written"
            raise ModelError(f"{where}: output {k} tensor {t} '{tensor.name}' is {what}")


def _check_options(op: Op, where: str) -> None:
    """Options every op reads the same way, checked whatever the op and even when shapes
    are dynamic (the shape rules then wait for resize_inputs): float options are finite
    (the kernels bake them into WGSL, which has no literal for NaN or infinity); strides,
    dilations, window and block sizes, split counts are >= 1; padding is SAME or VALID."""
    for key, value in op.attrs.items():
        if isinstance(value, float) and not math.isfinite(value):
            raise ModelError(f"{where}: option {key} is {value}, not a finite number")
        if key in POSITIVE_OPTIONS and not (isinstance(value, int) and value >= 1):
            raise ModelError(f"{where}: option {key} is {value} (must be >= 1)")
    if "padding" in op.attrs and op.attrs["padding"] not in PADDINGS:
        raise ModelError(f"{where}: padding {op.attrs['padding']!r} is not SAME or VALID")


def _check_op(graph: Graph, op: Op, spec: OpSpec, dynamic: bool) -> None:
    (lo, hi), (olo, ohi) = spec.inputs, spec.outputs
    if not lo <= len(op.inputs) <= hi:
        raise Invalid(f"has {len(op.inputs)} inputs, expected {_range(lo, hi)}")
    if not olo <= len(op.outputs) <= ohi:
        raise Invalid(f"has {len(op.outputs)} outputs, expected {_range(olo, ohi)}")
    for k, t in enumerate(op.inputs):
        if t < 0:
            continue
        tensor, cls = graph.tensors[t], spec.type_class(k)
        if tensor.dtype not in CLASSES[cls]:
            raise Invalid(f"input {k} '{tensor.name}' is {tensor.dtype}, expected "
                          f"{' or '.join(sorted(CLASSES[cls]))}")  # fmt: skip
        if k in spec.ranks and len(tensor.shape) not in spec.ranks[k]:
            ranks = " or ".join(str(r) for r in spec.ranks[k])
            raise Invalid(f"input {k} '{tensor.name}' {list(tensor.shape)} has rank "
                          f"{len(tensor.shape)}, expected {ranks}")  # fmt: skip
    missing = [key for key in spec.options if key not in op.attrs]
    if missing:
        raise Invalid(f"options lack {missing} (the op has another op's options or none)")
    act = op.attrs.get("fused_activation_function", "NONE")
    if act not in ACTIVATIONS:
        raise Invalid(f"unknown fused activation {act!r}")
    if not dynamic:
        _check_shapes(graph, op, spec)


def _check_shapes(graph: Graph, op: Op, spec: OpSpec) -> None:
    """The declared output shapes against the ones the op's inputs give."""
    shapes = [graph.tensors[t].shape if t >= 0 else None for t in op.inputs]
    outs = [graph.tensors[t] for t in op.outputs]
    if spec.keeps_size and math.prod(outs[0].shape) != math.prod(shapes[0]):
        raise Invalid(
            f"output '{outs[0].name}' {list(outs[0].shape)} does not hold the "
            f"{math.prod(shapes[0])} elements of input {list(shapes[0])}"
        )
    values = [graph.tensors[t].data if t >= 0 else None for t in op.inputs]
    expected = output_shapes(op.type, op.attrs, shapes, values)
    if expected is None:
        return
    for tensor, shape in zip(outs, expected, strict=False):
        if tuple(tensor.shape) != tuple(shape):
            raise Invalid(
                f"output '{tensor.name}' is declared {list(tensor.shape)} but its inputs "
                f"{[list(s) if s is not None else None for s in shapes]} give {list(shape)}"
            )


def _range(lo: int, hi: int) -> str:
    return str(lo) if lo == hi else f"{lo} or more" if hi >= 1 << 16 else f"{lo} to {hi}"
