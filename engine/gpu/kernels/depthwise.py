"""DEPTHWISE_CONV_2D on PHWC4 tensors (buffers or textures).

Weights [1, kH, kW, C * M] are packed at load into one vec4 per (dst slice, ky, kx)
(lanes = output channels), in a uniform buffer when they fit (split by output slices
into several dispatches otherwise, like conv.py, all sharing one pipeline). Two kernels:
- `depthwise_tiled` (multiplier 1, kernels up to 5x5, strides 1-2, no dilation): one
  invocation computes a BY x BX block of output pixels of one slice, fully unrolled;
  each input pixel of the block's footprint is loaded once and reused by every tap that
  reads it (3x3 stride 1, 4x2 block: 24 loads for 72 taps instead of 72).
- `depthwise` (generic): any kernel, stride, dilation and depth multiplier; one output
  pixel per invocation. With a multiplier M > 1 output channel o reads input channel
  o // M, gathered lane by lane.
"""

from __future__ import annotations

import numpy as np

from engine.gpu.kernels import epilogue
from engine.gpu.kernels.base import (
    BuildContext,
    Dispatch,
    Kernel,
    ceil_div,
    register,
    shape4,
    tensor_arg,
)
from engine.gpu.kernels.common import (
    geometry,
    optional_input,
    pad_groups,
    uniform_groups,
    weight_bindings,
    workgroup_for,
)
from engine.gpu.kernels.conv import conv_padding, pack_bias
from engine.gpu.kernels.params import GROUP, Params, fixed_bindings, flat_grid
from engine.gpu.kernels.tile_tables import depthwise_tile
from engine.gpu.kernels.workgroup_choice import pick, work_shapes
from engine.gpu.workgroups import Candidate, KernelSignature, WorkShape
from engine.model.ir import Graph, Op

VEC4_BYTES = 16
# Output block per invocation of the tiled kernel, (BY, BX) by (kernel, stride): the best
# of 1x2..4x4 on lavapipe (llvmpipe, 256 bit) over the real models' shapes, e.g. 3x3 s1
# 128x128x32: (4, 2) 12.3 GFLOP/s, (2, 4) 10.6, (2, 2) 10.0, one pixel (generic) 4.3.
TILES = {(3, 1): (4, 2), (3, 2): (2, 2), (5, 1): (4, 2), (5, 2): (4, 2)}
# Work shapes (BX, BY, 1) offered to the selector after the table's (TILES).
DEPTHWISE_WORK = tuple(WorkShape(x, y, 1) for y in (4, 2, 1) for x in (2, 4, 1))
# A layer split over several dispatches passes each one's (first slice, slice count) in
# a small f32 buffer, so that all its dispatches share one pipeline (weights padded to
# whole groups): fewer shaders to compile (hand_landmark_full: 17 conv1x1 pipelines
# instead of 68, cold first run 15.9 s -> 5.5 s). The split helpers (common.py's
# uniform_groups, pad_groups, weight_bindings) are shared with conv1x1 and transpose_conv.


def pack_depthwise_weights(w: np.ndarray) -> np.ndarray:
    """[1, kH, kW, OC] -> [S_out, kH, kW, 4] float32, zero padded lanes."""
    _, kh, kw, oc = w.shape
    so = ceil_div(oc, 4)
    padded = np.zeros((kh, kw, so * 4), np.float32)
    padded[:, :, :oc] = w[0]
    return np.ascontiguousarray(padded.reshape(kh, kw, so, 4).transpose(2, 0, 1, 3))


def _multiplier(op: Op, graph: Graph) -> int:
    oc = graph.tensors[op.inputs[1]].shape[3]
    return oc // shape4(graph, op.inputs[0]).c


def tile_plan(kh, kw, sh, sw, by, bx):
    """For each footprint row r: [(acc name, footprint column, tap index)] of its taps."""
    plan = []
    for r in range((by - 1) * sh + kh):
        taps = []
        for oy in range(by):
            ky = r - oy * sh
            if not 0 <= ky < kh:
                continue
            for ox in range(bx):
                for kx in range(kw):
                    taps.append((f"a{oy}_{ox}", ox * sw + kx, ky * kw + kx))
        plan.append(taps)
    return plan


class _DepthwiseBase(Kernel):
    op_types = ("DEPTHWISE_CONV_2D",)
    tiled = False
    storage_kinds = ("buffer", "texture")

    def accepts(self, op: Op, graph: Graph) -> bool:
        return graph.tensors[op.inputs[1]].is_constant

    def build(self, op: Op, graph: Graph, ctx: BuildContext) -> list[Dispatch]:
        if ctx.compact:  # (only the generic kernel is in the compact set)
            return [_build_compact(op, graph, ctx)]
        src, dst = shape4(graph, op.inputs[0]), shape4(graph, op.outputs[0])
        w = graph.tensors[op.inputs[1]].data
        bias = optional_input(op, graph, 2)
        _, kh, kw, _ = w.shape
        packed = pack_depthwise_weights(w)
        biases = pack_bias(bias, dst.c)
        top, left = conv_padding(op, (src.h, src.w), (kh, kw))
        a = op.attrs
        sh, sw = a["stride_h"], a["stride_w"]
        space, group = uniform_groups(dst.s, kh * kw * VEC4_BYTES, ctx)
        shared = group < dst.s
        if shared:
            packed, biases = pad_groups(packed, group), pad_groups(biases, group)
        measured = depthwise_tile(ctx.adapter, max(kh, kw), max(sh, sw)) if kh == kw else None
        if self.tiled:
            by, bx = measured or TILES.get((max(kh, kw), max(sh, sw)), (2, 2))
            by, bx = min(by, dst.h), min(bx, dst.w)
        else:
            by = bx = 1
        steps, extra = epilogue.build(op, graph, ctx=ctx)
        uni = space.split(",")[0]

        def dispatch(base: int, count: int, c: Candidate) -> Dispatch:
            n = group if shared else min(group, dst.s - base)
            bx, by, wg = c.work.x, c.work.y, c.workgroup
            tiles_y = ceil_div(dst.h, by)
            src_arg = tensor_arg(ctx, "src", op.inputs[0], "read")
            dst_arg = tensor_arg(ctx, "dst", op.outputs[0], "write")
            params = dict(
                **geometry(src, dst),
                precision=ctx.precision,
                epilogue_type="f32",
                src=src_arg,
                dst=dst_arg,
                dst_slices=n,
                slice_base=base,
                shared=shared,
                in_c=src.c,
                batch=dst.b,
                kh=kh,
                kw=kw,
                stride_h=sh,
                stride_w=sw,
                dil_h=a.get("dilation_h_factor", 1),
                dil_w=a.get("dilation_w_factor", 1),
                pad_top=top,
                pad_left=left,
                mult=_multiplier(op, graph),
                tiled=self.tiled,
                by=by,
                bx=bx,
                tiles_y=tiles_y,
                foot_w=(bx - 1) * sw + kw,
                plan=tile_plan(kh, kw, sh, sw, by, bx) if self.tiled else [],
                steps=steps,
            )
            part = count if shared else None
            bindings = (
                src_arg["binding"],
                dst_arg["binding"],
                *weight_bindings(packed, biases, space, base, n, part, matrix="vec4"),
                *extra,
            )
            grid = (
                ceil_div(ceil_div(dst.w, bx), wg[0]),
                ceil_div(dst.b * tiles_y, wg[1]),
                ceil_div(count, wg[2]),
            )
            return Dispatch(self.name, "depthwise.wgsl", params, bindings, wg, grid)

        tiles_y = ceil_div(dst.h, by)
        wg = workgroup_for(ceil_div(dst.w, bx), dst.b * tiles_y, dst.s)
        table = Candidate(wg, WorkShape(bx, by, 1))
        c = table
        if self.tiled:
            first = min(group, dst.s)
            sig = KernelSignature(
                self.name,
                (dst.w, dst.rows, first),
                "depthwise",
                ctx.precision_info.vec4_bytes,
                work_shapes(table.work, *(() if measured else DEPTHWISE_WORK)),
                (
                    ("k", f"{kh}x{kw}"),
                    ("stride", f"{sh}x{sw}"),
                    ("src", f"{src.w}x{src.rows}"),
                    ("weights", uni),
                    ("shared", int(shared)),
                    ("io", ctx.kind(op.inputs[0]) + "," + ctx.kind(op.outputs[0])),
                    ("precision", ctx.precision),
                ),
            )
            c = pick(sig, ctx, table, lambda c: dispatch(0, first, c))
        return [dispatch(base, min(group, dst.s - base), c) for base in range(0, dst.s, group)]


def _build_compact(op: Op, graph: Graph, ctx: BuildContext) -> Dispatch:
    """The compact set's depthwise conv (shaders/engine/depthwise_compact.wgsl): the
    generic kernel with its shapes in a uniform, one dispatch: one pipeline for every
    depthwise layer with the same storage kinds, multiplier form and epilogue."""
    src, dst = shape4(graph, op.inputs[0]), shape4(graph, op.outputs[0])
    w = graph.tensors[op.inputs[1]].data
    _, kh, kw, _ = w.shape
    top, left = conv_padding(op, (src.h, src.w), (kh, kw))
    a = op.attrs
    mult = _multiplier(op, graph)
    shapes = Params()
    shapes.add_all(
        "i32", in_w=src.w, in_h=src.h, kh=kh, kw=kw,
        stride_h=a["stride_h"], stride_w=a["stride_w"],
        dil_h=a.get("dilation_h_factor", 1), dil_w=a.get("dilation_w_factor", 1),
        pad_top=top, pad_left=left,
    )  # fmt: skip
    shapes.add_all(
        "u32", in_plane=src.rows * src.w, in_c=src.c, mult=mult,
        out_w=dst.w, out_h=dst.h, out_rows=dst.rows, dst_slices=dst.s,
    )  # fmt: skip
    src_arg = shapes.add_tiles(tensor_arg(ctx, "src", op.inputs[0], "read"))
    dst_arg = shapes.add_tiles(tensor_arg(ctx, "dst", op.outputs[0], "write"))
    flat = "(s * G.out_rows + row) * G.out_w + x"
    steps, extra = epilogue.build(op, graph, ctx=ctx, flat=flat, params=shapes)
    params = dict(
        precision=ctx.precision,
        epilogue_type="f32",
        src=src_arg,
        dst=dst_arg,
        gather=mult > 1,
        fields=shapes.fields,
        steps=steps,
    )
    bias = pack_bias(optional_input(op, graph, 2), dst.c)
    weights = pack_depthwise_weights(w)
    bindings = (*fixed_bindings(src_arg, dst_arg, weights, bias, shapes, "vec4"), *extra)
    grid = flat_grid(dst.w * dst.rows * dst.s)
    return Dispatch("depthwise", "depthwise_compact.wgsl", params, bindings, (GROUP, 1, 1), grid)


@register
class DepthwiseTiled(_DepthwiseBase):
    """Multiplier 1, kernel <= 5x5, stride 1 or 2, no dilation: unrolled output blocks."""

    name = "depthwise_tiled"
    priority = 50
    tiled = True
    compact = False  # the untiled kernel runs it in the compact set

    def accepts(self, op: Op, graph: Graph) -> bool:
        if not super().accepts(op, graph) or _multiplier(op, graph) != 1:
            return False
        _, kh, kw, _ = graph.tensors[op.inputs[1]].shape
        a = op.attrs
        return (
            kh <= 5
            and kw <= 5
            and a["stride_h"] in (1, 2)
            and a["stride_w"] in (1, 2)
            and a.get("dilation_h_factor", 1) == 1
            and a.get("dilation_w_factor", 1) == 1
        )


@register
class Depthwise(_DepthwiseBase):
    """Generic depthwise convolution: any kernel, stride, dilation, depth multiplier."""

    name = "depthwise"
    priority = 100
