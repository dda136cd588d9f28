"""PAD / PADV2 (constant value) on PHWC4 buffers, in all four dims of the layout.

One invocation per output vec4 (2-D grid: pixels of a slice, slices). The
input pixel is the output pixel shifted by the before-paddings; outside the
input the value is the pad constant. Channel padding by a multiple of 4 before
(the common case is padding after: 24 -> 48 before a residual add) moves whole
vec4s; any other channel offset gathers lane by lane. Lanes c >= C stay 0.
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
    tensor_binding,
)
from engine.gpu.kernels.common import geometry
from engine.gpu.kernels.elementwise import lane_mask, wgsl_float
from engine.model.ir import Graph, Op
from engine.precision import max_common_value

WG = 64
V = 4


def _const(graph: Graph, op: Op, k: int) -> np.ndarray | None:
    if len(op.inputs) <= k or op.inputs[k] < 0:
        return None
    t = graph.tensors[op.inputs[k]]
    return t.data if t.is_constant else None


def _pads4(op: Op, graph: Graph) -> list[tuple[int, int]] | None:
    """(before, after) for (B, H, W, C) of the PHWC4 mapping, or None if not constant."""
    p = _const(graph, op, 1)
    rank = len(graph.tensors[op.inputs[0]].shape)
    if p is None or p.size != 2 * rank:
        return None
    pairs = [(int(a), int(b)) for a, b in np.asarray(p).reshape(rank, 2)]
    return [(0, 0)] * (4 - rank) + pairs


def _value(op: Op, graph: Graph) -> float | None:
    if op.type == "PAD" or len(op.inputs) < 3 or op.inputs[2] < 0:
        return 0.0
    v = _const(graph, op, 2)
    return None if v is None else float(np.asarray(v, np.float32).reshape(-1)[0])


@register
class Pad(Kernel):
    name = "pad"
    op_types = ("PAD", "PADV2")

    def accepts(self, op: Op, graph: Graph) -> bool:
        pads, value = _pads4(op, graph), _value(op, graph)
        if pads is None or value is None or not np.isfinite(value):
            return False
        return all(a >= 0 and b >= 0 for a, b in pads) and abs(value) <= max_common_value()

    def build(self, op: Op, graph: Graph, ctx: BuildContext) -> list[Dispatch]:
        src, dst = shape4(graph, op.inputs[0]), shape4(graph, op.outputs[0])
        pads, value = _pads4(op, graph), _value(op, graph)
        (pb, _), (pt, _), (pl, _), (pc, _) = pads
        steps, extra = epilogue.build(op, graph)
        params = dict(
            **geometry(src, dst),
            precision=ctx.precision,
            in_b=src.b,
            in_c=src.c,
            in_slices=src.s,
            plane=dst.rows * dst.w,
            slices=dst.s,
            pad_b=pb,
            pad_t=pt,
            pad_l=pl,
            pad_c=pc,
            value=wgsl_float(value),
            # Lanes past the input's channels need the pad value unless it is 0
            # (the input's own padded lanes already are).
            fill_lanes=value != 0.0 and src.c % 4 != 0,
            mask=lane_mask(dst.c),
            v=V,
            steps=steps,
        )
        bindings = (
            tensor_binding(ctx, "src", op.inputs[0], "read"),
            tensor_binding(ctx, "dst", op.outputs[0], "write"),
        )
        grid = (ceil_div(dst.rows * dst.w, WG * V), dst.s, 1)
        return [Dispatch(self.name, "pad.wgsl", params, (*bindings, *extra), (WG, 1, 1), grid)]
