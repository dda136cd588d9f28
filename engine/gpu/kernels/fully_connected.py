"""FULLY_CONNECTED on PHWC4 buffers: y = x.reshape(-1, I) @ W.T + b.

The input is flattened to [N, I]. When its last dimension is I (the usual case, e.g.
hand_landmark's [1, 1152]), batch row n is pixel n of the PHWC4 input and feature i is
channel i; otherwise features are gathered lane by lane from the flat NHWC index. The
output, [N, O] or keep_num_dims' [..., O], always has O channels, so row n is output
pixel n. Weights [O, I] are packed as mat4x4 blocks [dst slice][src slice] (conv.py's
packing with a 1x1 kernel).

Batch 1 is a matrix-vector product: too little work per output slice for one invocation
to hide, so a work group of SPLIT invocations shares the reduction of each output slice
(a split-K with a tree reduction in work group memory). Weights go in a uniform buffer
when they all fit one binding, else in one storage buffer: one dispatch either way.
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
from engine.gpu.kernels.common import optional_input, pow2_ceil, weight_bindings
from engine.gpu.kernels.conv import MAT4_BYTES, pack_bias, pack_conv_weights
from engine.model.ir import Graph, Op

# Invocations per output slice (a power of two). On lavapipe, [1, 1152] -> 63:
# 1: 0.147 ms, 8: 0.067 ms, 32: 0.080 ms, 64: 0.090 ms (storage weights, one dispatch).
SPLIT = 8


@register
class FullyConnected(Kernel):
    name = "fully_connected"
    op_types = ("FULLY_CONNECTED",)

    def accepts(self, op: Op, graph: Graph) -> bool:
        w = graph.tensors[op.inputs[1]]
        fmt = op.attrs.get("weights_format", "DEFAULT")
        if not w.is_constant or len(w.shape) != 2 or fmt not in ("DEFAULT", 0):
            return False
        return graph.tensors[op.inputs[0]].size // w.shape[1] <= 65535  # work groups along y

    def build(self, op: Op, graph: Graph, ctx: BuildContext) -> list[Dispatch]:
        x = graph.tensors[op.inputs[0]]
        src, dst = shape4(graph, op.inputs[0]), shape4(graph, op.outputs[0])
        w = graph.tensors[op.inputs[1]].data
        o, i = w.shape
        bias = optional_input(op, graph, 2)
        batch = x.size // i
        if dst.c != o or dst.rows * dst.w != batch:
            raise ValueError(f"output {dst} is not [{batch}, {o}]")
        gather = src.c != i
        s_in = ceil_div(i, 4)
        packed = pack_conv_weights(w.reshape(o, 1, 1, i)).reshape(dst.s, s_in, 16)
        biases = pack_bias(bias, o)
        # Each weight is read once per batch row: uniform buffers win nothing over storage
        # that would pay for extra dispatches ([1, 1152] -> 63: 6 uniform dispatches
        # 0.079 ms, one storage dispatch 0.067 ms), so split nothing.
        fits = dst.s * s_in * MAT4_BYTES <= ctx.max_uniform_bytes
        space = "uniform" if fits else "storage, read"
        split = pow2_ceil(s_in, SPLIT)
        reduce_steps = []
        while split >> (len(reduce_steps) + 1):
            reduce_steps.append(split >> (len(reduce_steps) + 1))
        steps, extra = epilogue.build(op, graph)
        params = dict(
            precision=ctx.precision,
            epilogue_type="f32",
            dst_slices=dst.s,
            src_slices=s_in,
            batch=batch,
            out_w=dst.w,
            in_features=i,
            in_c=src.c,
            in_pixels=src.rows * src.w,
            gather=gather,
            split=split,
            reduce_steps=reduce_steps,
            steps=steps,
        )
        bindings = (
            tensor_binding(ctx, "src", op.inputs[0], "read"),
            tensor_binding(ctx, "dst", op.outputs[0], "write"),
            *weight_bindings(packed, biases, space, 0, dst.s),
            *extra,
        )
        grid = (dst.s, batch, 1)
        return [Dispatch(self.name, "fully_connected.wgsl", params, bindings, (split, 1, 1), grid)]
