"""LAYER_NORM (engine-internal, from the fuse_layer_norm transform) over the channels of
each pixel: y = (x - mean) * rsqrt(var + eps) * gamma + beta.

One invocation per pixel walks its S slices three times (like softmax): the f32 sum,
the f32 sum of squared deviations (padded lanes left out), then the write. gamma and
beta are f32 constants (one vec4 per slice, zero padded: padded lanes come out 0).
"""

from __future__ import annotations

import numpy as np

from engine.gpu.kernels import epilogue
from engine.gpu.kernels.base import (
    Binding,
    BuildContext,
    Dispatch,
    Kernel,
    ceil_div,
    register,
    shape4,
    tensor_binding,
)
from engine.gpu.kernels.common import optional_input
from engine.gpu.kernels.elementwise import lane_mask, wgsl_float
from engine.gpu.kernels.shape import mappable
from engine.model.ir import Graph, Op

WG = 64


def _per_channel(values: np.ndarray | None, channels: int, default: float) -> np.ndarray:
    flat = np.full(-(-channels // 4) * 4, 0.0, np.float32)
    flat[:channels] = default if values is None else np.asarray(values, np.float32).reshape(-1)
    return flat


@register
class LayerNorm(Kernel):
    name = "layer_norm"
    op_types = ("LAYER_NORM",)

    def accepts(self, op: Op, graph: Graph) -> bool:
        params = [t for t in op.inputs[1:] if t >= 0]
        channels = graph.tensors[op.inputs[0]].shape[-1]
        return (
            mappable(graph, (op.inputs[0], op.outputs[0]))
            and all(graph.tensors[t].is_constant for t in params)
            and all(graph.tensors[t].size in (1, channels) for t in params)
        )

    def build(self, op: Op, graph: Graph, ctx: BuildContext) -> list[Dispatch]:
        dst = shape4(graph, op.outputs[0])
        gamma = _per_channel(optional_input(op, graph, 1), dst.c, 1.0)
        beta = _per_channel(optional_input(op, graph, 2), dst.c, 0.0)
        steps, extra = epilogue.build(op, graph)
        params = dict(
            precision=ctx.precision,
            epilogue_type="f32",
            plane=dst.rows * dst.w,
            w=dst.w,
            slices=dst.s,
            channels=dst.c,
            epsilon=wgsl_float(op.attrs["epsilon"]),
            mask=lane_mask(dst.c),
            steps=steps,
        )
        per_channel = "array<vec4<f32>>"
        bindings = (
            tensor_binding(ctx, "src", op.inputs[0], "read"),
            tensor_binding(ctx, "dst", op.outputs[0], "write"),
            Binding("const", data=gamma, dtype="f32", name="gamma", type=per_channel),
            Binding("const", data=beta, dtype="f32", name="beta", type=per_channel),
        )
        grid = (ceil_div(dst.rows * dst.w, WG), 1, 1)
        bindings = (*bindings, *extra)
        return [Dispatch(self.name, "layer_norm.wgsl", params, bindings, (WG, 1, 1), grid)]
