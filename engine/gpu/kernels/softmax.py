"""SOFTMAX over the last axis (the channels of the PHWC4 mapping), with beta.

One invocation per pixel walks its S slices three times: max, sum of
exp((x - max) * beta) in f32, then the normalised write. Padded lanes take no
part and are written 0.
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
    tensor_binding,
)
from engine.gpu.kernels.elementwise import lane_mask, wgsl_float
from engine.model.ir import Graph, Op

WG = 64


@register
class Softmax(Kernel):
    name = "softmax"
    op_types = ("SOFTMAX",)

    def build(self, op: Op, graph: Graph, ctx: BuildContext) -> list[Dispatch]:
        dst = shape4(graph, op.outputs[0])
        steps, extra = epilogue.build(op, graph)
        params = dict(
            precision=ctx.precision,
            epilogue_type="f32",
            plane=dst.rows * dst.w,
            w=dst.w,
            slices=dst.s,
            beta=wgsl_float(op.attrs.get("beta", 1.0)),
            mask=lane_mask(dst.c),
            steps=steps,
        )
        bindings = (
            tensor_binding(ctx, "src", op.inputs[0], "read"),
            tensor_binding(ctx, "dst", op.outputs[0], "write"),
        )
        grid = (ceil_div(dst.rows * dst.w, WG), 1, 1)
        return [Dispatch(self.name, "softmax.wgsl", params, (*bindings, *extra), (WG, 1, 1), grid)]
