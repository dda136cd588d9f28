"""CONV_2D with a 1x1 kernel, stride 1 and no padding: a matmul over PHWC4 slices.

Pixels of the input and output line up one to one, so the op is
out[dst slice][p] = bias + sum over src slices of src[si][p] * W[dst slice][si] (mat4x4)
over the flattened rows*W pixels. One invocation computes BP pixels x BS output slices
(each loaded input vec4 feeds BS matrices, each weight matrix BP pixels). Where
tiles.quad_weights says so, the 4 invocations of a quad load one column of each
matrix each and share them (quadBroadcast). Weights are
packed like conv.py's ([dst slice][src slice] mat4x4) and sit in a uniform buffer,
split by output slices into several dispatches when the layer is larger than one
uniform binding; registered ahead of the generic conv (priority 50 < 100).
"""

from __future__ import annotations

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
    optional_input,
    pad_groups,
    pow2_ceil,
    uniform_groups,
    weight_bindings,
)
from engine.gpu.kernels.conv import MAT4_BYTES, pack_bias, pack_conv_weights
from engine.gpu.kernels.gemm import build_gemm
from engine.gpu.kernels.params import GROUP, Params, fixed_bindings, flat_grid
from engine.gpu.kernels.tile_tables import conv1x1_slices, gemm_tile, quad_weights
from engine.gpu.kernels.workgroup_choice import pick, work_shapes
from engine.gpu.workgroups import Candidate, KernelSignature, WorkShape
from engine.model.ir import Graph, Op

# Pixels x output slices per invocation: the best of (4..16) x (1..4) on lavapipe
# (llvmpipe 256 bit) over the 1x1 layers of face_detection_short_range,
# selfie_segmentation and hand_landmark, e.g. 16x16x96->96: (8, 4) 20 GFLOP/s,
# (8, 2) 17, (4, 4) 15.6, (4, 2) 12.7; 7x7x672->112: (8, 4) 16.6, (4, 2) 10.8.
BP, BS = 8, 4
MIN_GROUPS = 16


def slice_block(n: int, most: int) -> int:
    """Output slices per invocation: the largest b <= most that wastes the fewest of n."""
    return min(range(min(n, most), 0, -1), key=lambda b: ceil_div(n, b) * b)


def workgroup(nx: int, nz: int) -> tuple[int, int, int]:
    """Up to 64 invocations along pixels, then slice blocks; smaller groups when there
    would be fewer than MIN_GROUPS of them, so that every lavapipe thread gets work
    (7x7x112->672: 0.44 ms with 64-invocation groups, 0.30 ms with MIN_GROUPS 16)."""
    size = 64
    while size > 8 and ceil_div(nx * nz, size) < MIN_GROUPS:
        size //= 2
    wx = pow2_ceil(nx, size)
    return wx, 1, pow2_ceil(nz, size // wx)


@register
class Conv1x1(Kernel):
    """1x1 kernel, stride 1, no (explicit) padding, ungrouped."""

    name = "conv1x1"
    op_types = ("CONV_2D",)
    priority = 50
    storage_kinds = ("buffer", "texture")

    def accepts(self, op: Op, graph: Graph) -> bool:
        w = graph.tensors[op.inputs[1]]
        if not w.is_constant or w.shape[1:3] != (1, 1):
            return False
        a = op.attrs
        pad = a.get("explicit_padding", (0, 0, 0, 0))
        return (
            a["stride_h"] == 1
            and a["stride_w"] == 1
            and not any(pad)
            and shape4(graph, op.inputs[0]).c == w.shape[3]
        )

    def build(self, op: Op, graph: Graph, ctx: BuildContext) -> list[Dispatch]:
        src, dst = shape4(graph, op.inputs[0]), shape4(graph, op.outputs[0])
        if ctx.compact:
            return [_build_compact(op, graph, ctx)]
        tile = gemm_tile(ctx.adapter, dst.rows * dst.w, src.s, dst.s)
        if tile is not None:  # this adapter class runs 1x1 convs as a tiled GEMM
            return build_gemm(op, graph, ctx, tile)
        w = graph.tensors[op.inputs[1]].data
        bias = optional_input(op, graph, 2)
        packed = pack_conv_weights(w).reshape(dst.s, src.s, 16)
        biases = pack_bias(bias, dst.c)
        pixels = dst.rows * dst.w
        space, group = uniform_groups(dst.s, src.s * MAT4_BYTES, ctx)
        bp = min(BP, pixels)
        most = conv1x1_slices(ctx.adapter, BS)
        bs = slice_block(group, most)
        shared = group < dst.s
        if group < dst.s:
            group -= group % bs  # whole slice blocks per dispatch
        if shared:
            packed, biases = pad_groups(packed, group), pad_groups(biases, group)
        gate = op.attrs.get("input_scale")
        scale = None if gate is None else tensor_arg(ctx, "in_scale", gate, "read")
        steps, extra = epilogue.build(op, graph, ctx=ctx)
        uni = space.split(",")[0]
        n = group if shared else dst.s  # weight slices of every dispatch (shared) or the one
        quads = ctx.subgroups and quad_weights(ctx.adapter)

        def dispatch(base: int, count: int, c: Candidate) -> Dispatch:
            src_arg = tensor_arg(ctx, "src", op.inputs[0], "read")
            dst_arg = tensor_arg(ctx, "dst", op.outputs[0], "write")
            params = dict(
                precision=ctx.precision,
                epilogue_type="f32",
                src=src_arg,
                dst=dst_arg,
                dst_slices=n,
                src_slices=src.s,
                shared=shared,
                pixels=pixels,
                out_w=dst.w,
                bp=c.work.x,
                bs=c.work.z,
                # a quad (4 consecutive invocations) shares one row of pixels and slices
                quad=quads and c.workgroup[0] % 4 == 0,
                steps=steps,
                scale=scale,
            )
            bindings = (
                src_arg["binding"],
                dst_arg["binding"],
                *weight_bindings(packed, biases, space, base, n, count if shared else None),
                *([scale["binding"]] if scale is not None else []),
                *extra,
            )
            grid = c.groups((pixels, 1, count))
            return Dispatch(self.name, "conv1x1.wgsl", params, bindings, c.workgroup, grid)

        nbs = slice_block(n, bs)
        table = Candidate(workgroup(ceil_div(pixels, bp), ceil_div(n, nbs)), WorkShape(bp, 1, nbs))
        # Shared dispatches hold whole slice blocks (group % nbs == 0): keep nbs there.
        # Otherwise 4 slices per invocation first (most reuse of each input vector),
        # even when it pads the last block: the heuristic weighs that (rule IV).
        blocks = (
            (nbs,)
            if shared
            else tuple(sorted({b for b in (4, 2, 1, nbs) if b <= min(n, most)}, reverse=True))
        )
        sig = KernelSignature(
            self.name,
            (pixels, 1, n),
            "conv",
            ctx.precision_info.vec4_bytes,
            work_shapes(*(WorkShape(p, 1, b) for p in (8, 4, 16) for b in blocks), table.work),
            (
                ("src_s", src.s),
                ("weights", uni),
                ("shared", int(shared)),
                ("scale", int(scale is not None)),
                ("io", ctx.kind(op.inputs[0]) + "," + ctx.kind(op.outputs[0])),
                ("precision", ctx.precision),
                ("quad", int(quads)),
            ),
        )
        c = pick(sig, ctx, table, lambda c: dispatch(0, min(group, dst.s), c))
        return [dispatch(base, min(group, dst.s - base), c) for base in range(0, dst.s, group)]


def _build_compact(op: Op, graph: Graph, ctx: BuildContext) -> Dispatch:
    """The compact set's 1x1 conv (shaders/engine/conv1x1_compact.wgsl): one dispatch, one
    output vec4 per invocation, shapes in a uniform: one pipeline for every 1x1 layer with
    the same storage kinds, gate and epilogue (not a tiled GEMM: long code)."""
    src, dst = shape4(graph, op.inputs[0]), shape4(graph, op.outputs[0])
    pixels = dst.rows * dst.w
    shapes = Params()
    shapes.add_all("u32", pixels=pixels, out_w=dst.w, src_slices=src.s, dst_slices=dst.s)
    src_arg = shapes.add_tiles(tensor_arg(ctx, "src", op.inputs[0], "read"))
    dst_arg = shapes.add_tiles(tensor_arg(ctx, "dst", op.outputs[0], "write"))
    gate = op.attrs.get("input_scale")
    scale = None if gate is None else shapes.add_tiles(tensor_arg(ctx, "in_scale", gate, "read"))
    steps, extra = epilogue.build(op, graph, ctx=ctx, flat="s * G.pixels + p", params=shapes)
    params = dict(
        precision=ctx.precision,
        epilogue_type="f32",
        src=src_arg,
        dst=dst_arg,
        scale=scale,
        fields=shapes.fields,
        steps=steps,
    )
    weights = pack_conv_weights(graph.tensors[op.inputs[1]].data)
    bias = pack_bias(optional_input(op, graph, 2), dst.c)
    bindings = (
        *fixed_bindings(src_arg, dst_arg, weights, bias, shapes, "mat4x4"),
        *([scale["binding"]] if scale is not None else []),
        *extra,
    )
    grid = flat_grid(pixels * dst.s)
    return Dispatch("conv1x1", "conv1x1_compact.wgsl", params, bindings, (GROUP, 1, 1), grid)
