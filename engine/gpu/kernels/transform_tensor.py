"""MediaPipe's TransformTensorBilinear (version 2) on the GPU: a sub-crop of a feature map.

face_landmark_with_attention samples a 16x16 sub-crop (lips, each eye) of a 48x48x32
feature map through each sub-crop's matrix (engine/reference/landmark_ops.py: the
definition, the oracle).

- inputs: data [1, H, W, C] (buffer or texture), the matrix (16 values, a buffer: vec4 0
  and 1 are rows 0 and 1); output [1, out_h, out_w, C] (buffer or texture)
- one invocation per output vec4 (x, y, slice): the rows corrected to pixel centres
  (t3 += 0.5 t0 + 0.5 t1 - 0.5) give (tx, ty) in f32; outside [0, W - 1] x [0, H - 1]
  the output is 0, else the bilinear blend (in f32) of the four neighbours, a neighbour
  past the edge reading 0; the data's padded lanes are 0, so the output's stay 0
"""

from __future__ import annotations

from engine.gpu.kernels.base import (
    BuildContext,
    Dispatch,
    Kernel,
    register,
    shape4,
    tensor_arg,
    tensor_binding,
)
from engine.gpu.kernels.shape import WG, box
from engine.model.ir import Graph, Op


@register
class TransformTensorBilinear(Kernel):
    name = "transform_tensor"
    op_types = ("TransformTensorBilinear",)
    storage_kinds = ("buffer", "texture")

    def read_kinds(self, op: Op, graph: Graph, tensor: int) -> tuple[str, ...]:
        # the matrix: two rows read by every invocation, a buffer
        return self.storage_kinds if tensor == op.inputs[0] else ("buffer",)

    def build(self, op: Op, graph: Graph, ctx: BuildContext) -> list[Dispatch]:
        i, o = shape4(graph, op.inputs[0]), shape4(graph, op.outputs[0])
        region, grid = box(o)
        src = tensor_arg(ctx, "src", op.inputs[0], "read")
        dst = tensor_arg(ctx, "dst", op.outputs[0], "write")
        params = dict(precision=ctx.precision, epilogue_type="f32", in_h=i.h, in_w=i.w,
                      box=region, src=src, dst=dst)  # fmt: skip
        bindings = (
            src["binding"],
            tensor_binding(ctx, "matrix", op.inputs[1], "read"),
            dst["binding"],
        )
        return [Dispatch(self.name, "transform_tensor.wgsl", params, bindings, (WG, 1, 1), grid)]
