"""MAX_POOL_2D, AVERAGE_POOL_2D and MEAN over (H, W) on PHWC4 tensors (buffers or textures).

- Windowed pools (shaders/engine/pool.wgsl): one invocation per output vec4, taps
  looped in the shader. TFLite semantics: SAME/VALID out-of-bounds taps are
  ignored and the average divides by the in-bounds count; with
  attrs["explicit_padding"] (a merged PAD) the padded taps are zeros that count.
- Global reductions (shaders/engine/mean.wgsl): MEAN over axes {1, 2} of a 4-D input
  and pools whose single window covers the whole input. Large H*W: one work
  group per (batch, slice) sums strided pixels, then a tree in workgroup
  memory; small H*W: one invocation per (batch, slice) loops over the pixels. The
  threshold and the tree's width are per adapter class (tiles.reduce_tile).
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
from engine.gpu.kernels.common import geometry
from engine.gpu.kernels.elementwise import lane_mask, wgsl_float
from engine.gpu.kernels.tile_tables import reduce_tile
from engine.model.ir import Graph, Op
from engine.reference.padding import out_size, pad_before

POOL_WG = (8, 8, 1)
SERIAL_WG = 64  # global reductions below the class's tree threshold (tiles.reduce_tile)


def _window(op: Op) -> tuple[int, int, int, int]:
    a = op.attrs
    return (
        int(a["filter_height"]),
        int(a["filter_width"]),
        int(a.get("stride_h", 1)),
        int(a.get("stride_w", 1)),
    )


def _is_global(op: Op, graph: Graph) -> bool:
    """A pool whose one window is the whole input (then SAME and VALID both pad nothing)."""
    src, dst = shape4(graph, op.inputs[0]), shape4(graph, op.outputs[0])
    kh, kw, _, _ = _window(op)
    return (
        (kh, kw) == (src.h, src.w)
        and (dst.h, dst.w) == (1, 1)
        and "explicit_padding" not in op.attrs
    )


def _mean_axes(op: Op, graph: Graph) -> set[int] | None:
    axes = graph.tensors[op.inputs[1]] if len(op.inputs) > 1 and op.inputs[1] >= 0 else None
    if axes is None or not axes.is_constant:
        return None
    rank = len(graph.tensors[op.inputs[0]].shape)
    return {int(a) % rank for a in axes.data.reshape(-1)} if rank else None


def build_reduce(name: str, op: Op, graph: Graph, ctx: BuildContext, reduce: str) -> list[Dispatch]:
    """One work group per (batch, slice): `reduce` ("mean" or "max") over the H*W pixels."""
    src, dst = shape4(graph, op.inputs[0]), shape4(graph, op.outputs[0])
    hw = src.h * src.w
    tile = reduce_tile(ctx.adapter)
    tree = hw >= tile.min_pixels
    steps, extra = epilogue.build(op, graph, ctx=ctx)
    src_arg = tensor_arg(ctx, "src", op.inputs[0], "read")
    dst_arg = tensor_arg(ctx, "dst", op.outputs[0], "write")
    params = dict(
        **geometry(src, dst),
        precision=ctx.precision,
        epilogue_type="f32",
        src=src_arg,
        dst=dst_arg,
        reduce=reduce,
        hw=hw,
        batch=src.b,
        scale=wgsl_float(1.0 / hw),
        lowest=ctx.precision_info.lowest_wgsl,
        slices=dst.s,
        mask=lane_mask(dst.c),
        tree=tree,
        steps=steps,
    )
    bindings = (src_arg["binding"], dst_arg["binding"], *extra)
    grid = (src.s if tree else ceil_div(src.s, SERIAL_WG), src.b, 1)
    wg = (tile.wg if tree else SERIAL_WG, 1, 1)
    return [Dispatch(name, "mean.wgsl", params, bindings, wg, grid)]


@register
class GlobalPool(Kernel):
    """MAX_POOL_2D / AVERAGE_POOL_2D with one window over the whole input (SE blocks)."""

    name = "global_pool"
    storage_kinds = ("buffer", "texture")
    op_types = ("MAX_POOL_2D", "AVERAGE_POOL_2D")
    priority = 50

    def accepts(self, op: Op, graph: Graph) -> bool:
        return _is_global(op, graph)

    def build(self, op: Op, graph: Graph, ctx: BuildContext) -> list[Dispatch]:
        reduce = "max" if op.type == "MAX_POOL_2D" else "mean"
        return build_reduce(f"{self.name}_{reduce}", op, graph, ctx, reduce)


@register
class Mean(Kernel):
    """MEAN over H and W of a 4-D tensor (keep_dims either way); other axes -> CPU."""

    name = "mean"
    storage_kinds = ("buffer", "texture")
    op_types = ("MEAN",)

    def accepts(self, op: Op, graph: Graph) -> bool:
        return len(graph.tensors[op.inputs[0]].shape) == 4 and _mean_axes(op, graph) == {1, 2}

    def build(self, op: Op, graph: Graph, ctx: BuildContext) -> list[Dispatch]:
        return build_reduce(self.name, op, graph, ctx, "mean")


@register
class Pool2D(Kernel):
    """Windowed MAX_POOL_2D / AVERAGE_POOL_2D: any window, stride, SAME/VALID/explicit padding."""

    name = "pool2d"
    storage_kinds = ("buffer", "texture")
    op_types = ("MAX_POOL_2D", "AVERAGE_POOL_2D")
    priority = 100

    def build(self, op: Op, graph: Graph, ctx: BuildContext) -> list[Dispatch]:
        src, dst = shape4(graph, op.inputs[0]), shape4(graph, op.outputs[0])
        kh, kw, sh, sw = _window(op)
        if "explicit_padding" in op.attrs:
            top, bottom, left, right = (int(p) for p in op.attrs["explicit_padding"])
            # Taps in [-top, H + bottom) count (padded ones as 0); taps beyond are ignored.
            lo_h, hi_h, lo_w, hi_w = -top, src.h + bottom, -left, src.w + right
            explicit = True
        else:
            pad = op.attrs.get("padding", "VALID")
            top, left = pad_before(pad, src.h, kh, sh), pad_before(pad, src.w, kw, sw)
            lo_h, hi_h, lo_w, hi_w = 0, src.h, 0, src.w
            explicit = False
            if (out_size(pad, src.h, kh, sh), out_size(pad, src.w, kw, sw)) != (dst.h, dst.w):
                raise ValueError(f"pool output {dst} does not match {pad} padding of {src}")
        # Bounds checks only where some window pokes out of [lo, hi) or into the padding.
        inside = (
            -top >= max(lo_h, 0)
            and -left >= max(lo_w, 0)
            and (dst.h - 1) * sh - top + kh <= min(hi_h, src.h)
            and (dst.w - 1) * sw - left + kw <= min(hi_w, src.w)
        )
        steps, extra = epilogue.build(op, graph, ctx=ctx)
        src_arg = tensor_arg(ctx, "src", op.inputs[0], "read")
        dst_arg = tensor_arg(ctx, "dst", op.outputs[0], "write")
        params = dict(
            **geometry(src, dst),
            precision=ctx.precision,
            src=src_arg,
            dst=dst_arg,
            reduce="max" if op.type == "MAX_POOL_2D" else "mean",
            slices=dst.s,
            kh=kh,
            kw=kw,
            stride_h=sh,
            stride_w=sw,
            pad_top=top,
            pad_left=left,
            lo_h=lo_h,
            hi_h=hi_h,
            lo_w=lo_w,
            hi_w=hi_w,
            explicit=explicit and not inside,
            checks=not inside,
            lowest=ctx.precision_info.lowest_wgsl,
            mask=lane_mask(dst.c),
            steps=steps,
        )
        bindings = (
            src_arg["binding"],
            dst_arg["binding"],
            *extra,
        )
        grid = (
            ceil_div(dst.w, POOL_WG[0]),
            ceil_div(dst.rows, POOL_WG[1]),
            ceil_div(dst.s, POOL_WG[2]),
        )
        return [Dispatch(self.name, "pool.wgsl", params, bindings, POOL_WG, grid)]
