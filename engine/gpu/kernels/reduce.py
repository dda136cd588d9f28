"""MEAN / SUM over any axes of a rank <= 4 tensor (the cases pooling.Mean, H and W of a
4-D tensor, leaves): over the channels (LayerNorm statistics), over tokens (a ViT's
pooling), over the batch, in any combination, keep_dims either way.

The input's axes map to (B, H, W, C) (left-padded with 1s, engine/model/layout.py),
the output's too; a kept input axis is read at the output coordinate of the axis it
becomes. One invocation per output vec4 loops over the reduced (B, H, W) axes:
- channels kept: they stay the output's channels, so each read is one input vec4
  (lanes line up with the output's);
- channels reduced: each output lane is its own input pixel; the loop adds every
  slice's lanes (padded lanes are 0) for it.
f32 sums at both precisions; MEAN scales by 1 / (elements reduced).
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
from engine.gpu.kernels.elementwise import wgsl_float
from engine.gpu.kernels.shape import mappable
from engine.model.ir import Graph, Op

WG = 64  # invocations per work group, 1-D over the output pixels of one slice
OUT_VARS = ("ob", "oh", "ow", "oc")  # the output's 4-D coordinates in the template


def reduced_axes(op: Op, graph: Graph) -> set[int] | None:
    """The reduced axes as (B, H, W, C) positions, or None when not constant."""
    axes = graph.tensors[op.inputs[1]] if len(op.inputs) > 1 and op.inputs[1] >= 0 else None
    rank = len(graph.tensors[op.inputs[0]].shape)
    if axes is None or not axes.is_constant or rank == 0:
        return None
    return {int(a) % rank + 4 - rank for a in np.asarray(axes.data).reshape(-1)}


def _coords(op: Op, graph: Graph, reduced: set[int]) -> list[str]:
    """WGSL u32 expression of each input (B, H, W, C) coordinate: a loop variable `r<a>`
    for reduced axes, 0 for padding, else the output coordinate of the axis it becomes."""
    rank = len(graph.tensors[op.inputs[0]].shape)
    keep = bool(op.attrs.get("keep_dims", False))
    kept = [a for a in range(4 - rank, 4) if a not in reduced]
    out_rank = rank if keep else len(kept)
    exprs = []
    for a in range(4):
        if a < 4 - rank:
            exprs.append("0u")
        elif a in reduced:
            exprs.append(f"r{a}")
        else:
            out_axis = a if keep else kept.index(a) + 4 - out_rank
            exprs.append(OUT_VARS[out_axis])
    return exprs


@register
class Reduce(Kernel):
    """MEAN / SUM over any constant axes (float, rank <= 4)."""

    name = "reduce"
    storage_kinds = ("buffer", "texture")
    op_types = ("MEAN", "SUM")
    priority = 150  # after pooling.Mean (H, W of a 4-D tensor: tree reduction)

    def accepts(self, op: Op, graph: Graph) -> bool:
        return reduced_axes(op, graph) is not None and mappable(
            graph, (op.inputs[0], op.outputs[0])
        )

    def build(self, op: Op, graph: Graph, ctx: BuildContext) -> list[Dispatch]:
        src, dst = shape4(graph, op.inputs[0]), shape4(graph, op.outputs[0])
        reduced = reduced_axes(op, graph)
        coords = _coords(op, graph, reduced)
        extent = (src.b, src.h, src.w, src.c)
        count = int(np.prod([extent[a] for a in reduced]))
        steps, extra = epilogue.build(op, graph, ctx=ctx)
        src_arg = tensor_arg(ctx, "src", op.inputs[0], "read")
        dst_arg = tensor_arg(ctx, "dst", op.outputs[0], "write")
        params = dict(
            precision=ctx.precision,
            epilogue_type="f32",
            src=src_arg,
            dst=dst_arg,
            loops=[(a, extent[a]) for a in (0, 1, 2) if a in reduced],
            b=coords[0],
            h=coords[1],
            w=coords[2],
            c=coords[3],
            channels_reduced=3 in reduced,
            in_h=src.h,
            in_w=src.w,
            in_rows=src.rows,
            in_s=src.s,
            out_h=dst.h,
            out_w=dst.w,
            out_c=dst.c,
            plane=dst.rows * dst.w,
            scale=wgsl_float(1.0 / count) if op.type == "MEAN" else "1.0",
            steps=steps,
        )
        bindings = (src_arg["binding"], dst_arg["binding"])
        grid = (ceil_div(dst.rows * dst.w, WG), dst.s, 1)
        name = f"{self.name}_{op.type.lower()}"
        return [Dispatch(name, "reduce.wgsl", params, (*bindings, *extra), (WG, 1, 1), grid)]
