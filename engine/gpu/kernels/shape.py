"""Data movement on PHWC4 buffers: RESHAPE, CONCATENATION, SPLIT, SLICE, STRIDED_SLICE,
TRANSPOSE, GATHER (constant indices picking an affine pattern), DEPTH_TO_SPACE,
SPACE_TO_DEPTH.

Every kernel is a gather over the output, BX neighbouring vec4 per invocation
(shaders/engine/gather.wgsl and its children; shaders/engine/concat.wgsl), in one of three modes:
- copy:  same PHWC4 structure (e.g. a reshape that keeps C), dst[i] = src[i];
- vec4:  output lanes are the lanes of one input vec4 (channel offsets multiple of 4);
- lanes: one read per lane, for any other channel mapping.
The slice family and TRANSPOSE share one affine map, input = BEGIN + M * output over
the (b, h, w, c) coordinates, derived by running the reference kernel on an index
tensor: whatever masks STRIDED_SLICE carries, the GPU reads what the oracle reads.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from engine.errors import ModelError
from engine.gpu.kernels import epilogue
from engine.gpu.kernels.base import (
    MAX_GROUPS,
    Binding,
    BuildContext,
    Dispatch,
    Kernel,
    Shape4,
    ceil_div,
    register,
    shape4,
    tensor_binding,
)
from engine.gpu.kernels.common import pack_phwc4
from engine.model.ir import Graph, Op
from engine.model.layout import phwc4_shape
from engine.reference import registry as reference

WG = 64  # invocations per work group, 1-D over the output vec4
MAX_STORAGE = 8  # WebGPU's minimum maxStorageBuffersPerShaderStage
FLOAT = ("float32", "float16")  # the engine stores floats only
BX = 4  # output vec4 per invocation along x: 20-25% faster than 1 on lavapipe (see report)


def box(
    out: Shape4,
    lo: tuple[int, ...] = (0, 0, 0, 0),
    size: tuple[int, ...] | None = None,
    bx: int = 1,
) -> tuple[dict, tuple[int, int, int]]:
    """Template parameters (shaders/engine/phwc4_grid.wgsl) and work groups (of WG
    invocations) for a box of output vec4: b, h, x, slice from `lo` over `size` (default:
    the whole tensor), `bx` neighbouring pixels along x per invocation."""
    b, h, width, s = size or (out.b, out.h, out.w, out.s)
    w = ceil_div(width, bx)
    total = b * h * w * s
    groups = max(1, ceil_div(total, WG))
    gx = min(groups, MAX_GROUPS)
    params = dict(
        total=total, stride=gx * WG, b=b, h=h, w=w, bx=bx,
        x_end=lo[2] + width, ragged=w * bx != width,
        b0=lo[0], h0=lo[1], x0=lo[2], s0=lo[3], out_h=out.h, out_rows=out.rows, out_w=out.w,
    )  # fmt: skip
    return params, (gx, ceil_div(groups, gx), 1)


def mappable(graph: Graph, tensors) -> bool:
    """Every tensor is float, non-empty and has a PHWC4 mapping (rank <= 4, static)."""
    try:
        return all(
            graph.tensors[t].dtype in FLOAT
            and graph.tensors[t].size > 0
            and phwc4_shape(graph.tensors[t].shape)
            for t in tensors
        )
    except ModelError:
        return False


def gather_dispatch(
    name: str, template: str, op: Op, graph: Graph, ctx: BuildContext, src: int, dst: int,
    mode: str, **params,
) -> Dispatch:  # fmt: skip
    """One dispatch of a gather.wgsl child writing tensor `dst` from tensor `src`."""
    i, o = shape4(graph, src), shape4(graph, dst)
    steps, extra = epilogue.build(replace(op, outputs=(dst,)), graph)
    grid, groups = box(o, bx=BX if o.w >= BX else 1)
    values = dict(
        precision=ctx.precision, mode=mode, box=grid, steps=steps,
        in_h=i.h, in_w=i.w, in_rows=i.rows, in_c=i.c, out_h=o.h, out_w=o.w, out_c=o.c, **params,
    )  # fmt: skip
    bindings = (
        tensor_binding(ctx, "src", src, "read"),
        tensor_binding(ctx, "dst", dst, "write"),
        *extra,
    )
    return Dispatch(name, template, values, bindings, (WG, 1, 1), groups)


# --- RESHAPE -------------------------------------------------------------------------
@register
class Reshape(Kernel):
    """Row-major reshape (EXPAND_DIMS and SQUEEZE are reshapes too); a copy when C is
    kept, vec4 reads when both C % 4 == 0."""

    name = "reshape"
    op_types = ("RESHAPE", "EXPAND_DIMS", "SQUEEZE")

    def accepts(self, op: Op, graph: Graph) -> bool:
        src, dst = op.inputs[0], op.outputs[0]
        return not graph.tensors[src].is_constant and mappable(graph, (src, dst))

    def build(self, op: Op, graph: Graph, ctx: BuildContext) -> list[Dispatch]:
        i, o = shape4(graph, op.inputs[0]), shape4(graph, op.outputs[0])
        mode = "copy" if i.c == o.c else "vec4" if i.c % 4 == 0 == o.c % 4 else "lanes"
        return [
            gather_dispatch(
                self.name,
                "reshape.wgsl",
                op,
                graph,
                ctx,
                op.inputs[0],
                op.outputs[0],
                mode,
                in_pixels=i.rows * i.w,
            )  # fmt: skip
        ]


# --- SLICE, STRIDED_SLICE, SPLIT, TRANSPOSE ----------------------------------------
def _data_input(op: Op) -> int:
    return op.inputs[1] if op.type == "SPLIT" else op.inputs[0]


def affine_map(op: Op, graph: Graph, out: int) -> tuple[list[int], list[list[int]]] | None:
    """(BEGIN, M) with input(b,h,w,c) = BEGIN + M @ output(b,h,w,c) for output #`out`,
    from the reference kernel run on the flat indices of the input; None if not affine."""
    src = _data_input(op)
    x = graph.tensors[src]
    probe = [
        None if t < 0
        else np.arange(x.size, dtype=np.int64).reshape(x.shape) if t == src
        else graph.tensors[t].data
        for t in op.inputs
    ]  # fmt: skip
    try:
        y = reference.kernel(op.type)(op, probe)[out]
    except (ModelError, ValueError, IndexError):
        return None
    in4, out4 = phwc4_shape(x.shape), phwc4_shape(graph.tensors[op.outputs[out]].shape)
    if y.size != int(np.prod(out4)):
        return None
    coords = np.stack(np.unravel_index(y.reshape(-1), in4))  # [4, N]: input coordinates
    begin = coords[:, 0]
    m = np.zeros((4, 4), np.int64)
    step = 1
    for k in (3, 2, 1, 0):  # output axis k advances the flat output index by `step`
        if out4[k] > 1:
            m[:, k] = coords[:, step] - begin
        step *= out4[k]
    grid = np.indices(out4).reshape(4, -1)
    if not np.array_equal(begin[:, None] + m @ grid, coords):
        return None
    return [int(v) for v in begin], m.tolist()


@register
class AffineGather(Kernel):
    """Any axis-wise affine gather: slices with strides and masks, splits, transposes,
    GATHERs whose constant indices are evenly spaced (others run on the CPU)."""

    name = "slice"
    op_types = ("SLICE", "STRIDED_SLICE", "SPLIT", "TRANSPOSE", "GATHER")

    def accepts(self, op: Op, graph: Graph) -> bool:
        src = _data_input(op)
        params = [t for t in op.inputs if t != src]
        if graph.tensors[src].is_constant or any(
            t < 0 or not graph.tensors[t].is_constant for t in params
        ):
            return False
        if not mappable(graph, (src, *op.outputs)):
            return False
        if len(op.outputs) > 1 and epilogue.steps_of(op):
            return False  # the reference applies an epilogue to output 0 only
        return all(affine_map(op, graph, k) is not None for k in range(len(op.outputs)))

    def build(self, op: Op, graph: Graph, ctx: BuildContext) -> list[Dispatch]:
        src = _data_input(op)
        i = shape4(graph, src)
        dispatches = []
        for k, dst in enumerate(op.outputs):
            begin, m = affine_map(op, graph, k)
            o = shape4(graph, dst)
            channel_kept = m[3] == [0, 0, 0, 1] and all(m[a][3] == 0 for a in range(3))
            if channel_kept and begin == [0, 0, 0, 0] and m == np.eye(4).tolist() and i == o:
                mode = "copy"
            elif channel_kept and begin[3] % 4 == 0:
                mode = "vec4"
            else:
                mode = "lanes"
            dispatches.append(
                gather_dispatch(
                    self.name, "slice.wgsl", op, graph, ctx, src, dst, mode, begin=begin, m=m
                )
            )
        return dispatches


# --- DEPTH_TO_SPACE, SPACE_TO_DEPTH -------------------------------------------------
@register
class DepthSpace(Kernel):
    """Block rearrangement between space and depth (DCR order, as TFLite)."""

    name = "depth_space"
    op_types = ("DEPTH_TO_SPACE", "SPACE_TO_DEPTH")

    def accepts(self, op: Op, graph: Graph) -> bool:
        src, dst = op.inputs[0], op.outputs[0]
        return (
            not graph.tensors[src].is_constant
            and len(graph.tensors[src].shape) == 4
            and mappable(graph, (src, dst))
        )

    def build(self, op: Op, graph: Graph, ctx: BuildContext) -> list[Dispatch]:
        i, o = shape4(graph, op.inputs[0]), shape4(graph, op.outputs[0])
        d2s = op.type == "DEPTH_TO_SPACE"
        mode = "vec4" if (o.c if d2s else i.c) % 4 == 0 else "lanes"
        return [
            gather_dispatch(
                self.name,
                "depth_space.wgsl",
                op,
                graph,
                ctx,
                op.inputs[0],
                op.outputs[0],
                mode,
                direction="d2s" if d2s else "s2d",
                block=int(op.attrs["block_size"]),
            )  # fmt: skip
        ]


# --- CONCATENATION -------------------------------------------------------------------
@register
class Concatenation(Kernel):
    """Concat along any axis; inputs bound per dispatch, the output split along the axis
    so that no dispatch binds more than WebGPU's minimum of 8 storage buffers."""

    name = "concat"
    op_types = ("CONCATENATION",)

    def accepts(self, op: Op, graph: Graph) -> bool:
        ins = [t for t in op.inputs if t >= 0]
        ranks = {len(graph.tensors[t].shape) for t in (*ins, op.outputs[0])}
        return (
            len(ranks) == 1
            and mappable(graph, (op.outputs[0],))
            and all(graph.tensors[t].size == 0 or mappable(graph, (t,)) for t in ins)
        )

    def build(self, op: Op, graph: Graph, ctx: BuildContext) -> list[Dispatch]:
        out = shape4(graph, op.outputs[0])
        rank = len(graph.tensors[op.outputs[0]].shape)
        axis = int(op.attrs.get("axis", 0))
        axis = (axis + rank if axis < 0 else axis) + 4 - rank  # axis of (b, h, w, c)
        ins = [t for t in op.inputs if t >= 0 and graph.tensors[t].size > 0]
        dims = [(s.b, s.h, s.w, s.c) for s in (shape4(graph, t) for t in ins)]
        offs = np.cumsum([0] + [d[axis] for d in dims]).tolist()
        if axis < 3:
            mode = "axis"
            spans = [(offs[j], offs[j + 1]) for j in range(len(ins))]
        elif all(d[3] % 4 == 0 for d in dims[:-1]):
            mode = "slices"
            spans = [(offs[j] // 4, ceil_div(offs[j + 1], 4)) for j in range(len(ins))]
        else:
            mode = "lanes"
            spans = [(offs[j] // 4, ceil_div(offs[j + 1], 4)) for j in range(len(ins))]
        steps, extra = epilogue.build(op, graph)
        limit = max(4, MAX_STORAGE - 1 - len(extra))
        dispatches = []
        for lo, hi, group in _partition(spans, limit):
            parts, bindings = [], [tensor_binding(ctx, "dst", op.outputs[0], "write")]
            for n, j in enumerate(group):
                s4 = shape4(graph, ins[j])
                o = [0, 0, 0, 0]
                o[axis] = offs[j] // 4 if mode == "slices" else offs[j]
                end = ceil_div(offs[j + 1], 4) if mode == "slices" else offs[j + 1]
                parts.append(dict(end=end, off=offs[j], o=o, rows=s4.rows, h=s4.h, w=s4.w))
                t, name = graph.tensors[ins[j]], f"in{n}"
                bindings.append(
                    Binding("const", data=pack_phwc4(t.data), name=name, type="array<vec4<T>>")
                    if t.is_constant
                    else tensor_binding(ctx, name, ins[j], "read")
                )
            start, size = [0, 0, 0, 0], [out.b, out.h, out.w, out.s]
            start[axis], size[axis] = lo, hi - lo
            region, grid = box(out, tuple(start), tuple(size), bx=BX if size[2] >= BX else 1)
            values = dict(
                precision=ctx.precision, mode=mode, box=region, parts=parts,
                axis_var="bhx"[axis] if axis < 3 else "s", out_c=out.c, steps=steps,
            )  # fmt: skip
            bindings = (*bindings, *extra)
            dispatches.append(
                Dispatch(self.name, "concat.wgsl", values, bindings, (WG, 1, 1), grid)
            )
        return dispatches


def _partition(spans: list[tuple[int, int]], limit: int):
    """Split the units [0, spans[-1][1]) into ranges touching at most `limit` inputs each
    (input j covers units [spans[j][0], spans[j][1])); yields (lo, hi, input indices)."""
    cuts = sorted({u for span in spans for u in span})
    lo, group = cuts[0], []
    for a, b in zip(cuts, cuts[1:], strict=False):
        touched = [j for j, (s0, s1) in enumerate(spans) if s0 < b and s1 > a]
        merged = sorted(set(group) | set(touched))
        if group and len(merged) > limit:
            yield lo, a, group
            lo, merged = a, touched
        group = merged
    yield lo, cuts[-1], group
