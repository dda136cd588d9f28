"""DEPTHWISE_CONV_1X1: a depthwise conv and the 1x1 conv reading it, one dispatch.

The op comes from engine/transforms/fuse_depthwise.py, on the adapter classes whose
tile table asks for it (tile_tables.FUSED_TILES). A work group takes a TH x TW tile of output
pixels: its invocations compute the tile's depthwise result for every slice into work
group memory (BY x BX pixels of one slice each, the depthwise kernel's block for the
class), then, after one barrier, the 1x1 conv from there, BP pixels x BS output slices
per invocation, with the 1x1 conv's epilogue (shaders/engine/depthwise_conv1x1.wgsl).
Weights sit in uniform buffers when they fit one binding, in storage buffers otherwise.

Tile sizes follow fixed rules from the class's FusedTile, no timing (the same model on
the same adapter gets the same shader): at most `pixels` pixels and WebGPU's minimum
work group memory (16 KiB) per tile, halved until there are `min_groups` work groups
where the image allows.
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
    geometry,
    optional_input,
    pow2_ceil,
    uniform_groups,
    weight_bindings,
)
from engine.gpu.kernels.conv import MAT4_BYTES, conv_padding, pack_bias, pack_conv_weights
from engine.gpu.kernels.conv1x1 import slice_block
from engine.gpu.kernels.depthwise import TILES, VEC4_BYTES, pack_depthwise_weights, tile_plan
from engine.gpu.kernels.tile_tables import FusedTile, depthwise_tile, fused_tile, quad_weights
from engine.model.ir import Graph, Op
from engine.transforms.fuse_depthwise import FUSED, depthwise_part

WORKGROUP_MEMORY = 16384  # bytes: WebGPU's minimum maxComputeWorkgroupStorageSize


def _pow2_floor(n: int) -> int:
    return 1 << max(0, n.bit_length() - 1)


def tile_shape(
    out_h: int, out_w: int, batch: int, src_slices: int, block: tuple[int, int], t: FusedTile
) -> tuple[int, int, int, int]:
    """(TH, TW, BY, BX): the work group's tile of output pixels and the depthwise block
    of one invocation; powers of two, TH a multiple of BY and TW of BX."""
    cap = _pow2_floor(min(t.pixels, WORKGROUP_MEMORY // (src_slices * VEC4_BYTES)))
    by, bx = block
    while by * bx > cap:  # many channels: smaller blocks
        by, bx = (by // 2, bx) if by >= bx else (by, bx // 2)
    by, bx = _pow2_floor(by), _pow2_floor(bx)
    tw = max(bx, min(pow2_ceil(out_w, 16), cap // by))
    th = by
    while th * 2 * tw <= cap and th < out_h:
        th *= 2

    def groups(th: int, tw: int) -> int:
        return ceil_div(out_w, tw) * ceil_div(out_h, th) * batch

    while groups(th, tw) < t.min_groups and (th > by or tw > bx):
        if th > by and (th >= tw or tw == bx):
            th //= 2
        else:
            tw //= 2
    return th, tw, by, bx


def _space(slices: int, per_slice: int, ctx: BuildContext) -> str:
    """Uniform when all `slices` fit one binding, else storage: one dispatch either way."""
    return uniform_groups(slices, per_slice, ctx, max_splits=1)[0]


@register
class DepthwiseConv1x1(Kernel):
    name = "depthwise_conv1x1"
    op_types = (FUSED,)
    priority = 50
    storage_kinds = ("buffer", "texture")
    compact = False  # (the compact set's transforms never make this op)

    def build(self, op: Op, graph: Graph, ctx: BuildContext) -> list[Dispatch]:
        src, dst = shape4(graph, op.inputs[0]), shape4(graph, op.outputs[0])
        t = fused_tile(ctx.adapter) or FusedTile()
        dw = depthwise_part(op)
        dw_w = graph.tensors[op.inputs[1]].data
        _, kh, kw, _ = dw_w.shape
        top, left = conv_padding(dw, (src.h, src.w), (kh, kw))
        sh, sw = dw.attrs["stride_h"], dw.attrs["stride_w"]
        k, stride = max(kh, kw), max(sh, sw)
        block = (depthwise_tile(ctx.adapter, k, stride) if kh == kw else None) or TILES.get(
            (k, stride), (2, 2)
        )
        th, tw, by, bx = tile_shape(dst.h, dst.w, dst.b, src.s, block, t)
        bp, bs = min(t.bp, th * tw), slice_block(dst.s, t.bs)
        dw_steps, _ = epilogue.build(dw, graph, ctx=ctx)  # activations only
        # No "mask" step: it keeps the padded lanes of the *output's* last slice at zero
        # after a sigmoid, and would zero real depthwise channels here. Padded depthwise
        # lanes need none: they meet zero 1x1 weights (pack_conv_weights pads with zeros).
        dw_steps = [st for st in dw_steps if st["kind"] != "mask"]
        steps, extra = epilogue.build(op, graph, ctx=ctx)
        dw_space = _space(src.s, kh * kw * VEC4_BYTES, ctx)
        pw_space = _space(dst.s, src.s * MAT4_BYTES, ctx)
        wg = min(t.wg, ctx.max_workgroup_invocations)
        src_arg = tensor_arg(ctx, "src", op.inputs[0], "read")
        dst_arg = tensor_arg(ctx, "dst", op.outputs[0], "write")
        params = dict(
            **geometry(src, dst),
            precision=ctx.precision,
            epilogue_type="f32",
            src=src_arg,
            dst=dst_arg,
            src_slices=src.s,
            dst_slices=dst.s,
            kh=kh,
            kw=kw,
            stride_h=sh,
            stride_w=sw,
            pad_top=top,
            pad_left=left,
            th=th,
            tw=tw,
            tiles_y=ceil_div(dst.h, th),
            by=by,
            bx=bx,
            foot_w=(bx - 1) * sw + kw,
            plan=tile_plan(kh, kw, sh, sw, by, bx),
            bp=bp,
            bs=bs,
            blocks=ceil_div(dst.s, bs),
            # the 4 invocations of a quad share their output slices: each loads one
            # column of each weight matrix (as conv1x1.py on the classes quad_weights names)
            quad=ctx.subgroups and quad_weights(ctx.adapter) and (th * tw // bp) % 4 == 0,
            dw_steps=dw_steps,
            steps=steps,
        )
        dw_bias, pw_bias = optional_input(op, graph, 2), optional_input(op, graph, 4)
        pw_w = pack_conv_weights(graph.tensors[op.inputs[3]].data)
        dw_packed = pack_depthwise_weights(dw_w), pack_bias(dw_bias, src.c)
        bindings = (
            src_arg["binding"],
            dst_arg["binding"],
            *weight_bindings(*dw_packed, dw_space, 0, src.s, matrix="vec4", prefix="dw_"),
            *weight_bindings(pw_w, pack_bias(pw_bias, dst.c), pw_space, 0, dst.s),
            *extra,
        )
        grid = (ceil_div(dst.w, tw), dst.b * ceil_div(dst.h, th), 1)
        return [Dispatch(self.name, "depthwise_conv1x1.wgsl", params, bindings, (wg, 1, 1), grid)]
