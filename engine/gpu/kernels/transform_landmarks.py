"""MediaPipe's TransformLandmarks (version 2) on the GPU: landmarks mapped by a 4x4 matrix.

face_landmark_with_attention maps each sub-crop's landmarks back into the crop with the
sub-crop's matrix (engine/reference/landmark_ops.py: the definition, the oracle).

- inputs: landmarks [1, N, D] (D = 2 or 3; PHWC4 (1, 1, N, D): landmark i is vec4 i) and
  the matrix (16 values: vec4 0 and 1 are rows 0 and 1); output: like the landmarks
- one invocation per landmark: x' = m0 . (x, y, 0, 1), y' = m1 . (x, y, 0, 1), z as it is;
  in f32 at both precisions; lanes past D stay 0
- buffers only: a few dozen landmarks, nothing to gain from a texture
"""

from __future__ import annotations

from engine.gpu.kernels.base import (
    BuildContext,
    Dispatch,
    Kernel,
    ceil_div,
    register,
    shape4,
    tensor_binding,
)
from engine.model.ir import Graph, Op

WG = 64


@register
class TransformLandmarks(Kernel):
    name = "transform_landmarks"
    op_types = ("TransformLandmarks",)

    def build(self, op: Op, graph: Graph, ctx: BuildContext) -> list[Dispatch]:
        lm = shape4(graph, op.inputs[0])
        params = dict(precision=ctx.precision, n=lm.w, dims=lm.c)
        bindings = (
            tensor_binding(ctx, "landmarks", op.inputs[0], "read"),
            tensor_binding(ctx, "matrix", op.inputs[1], "read"),
            tensor_binding(ctx, "dst", op.outputs[0], "write"),
        )
        grid = (ceil_div(lm.w, WG), 1, 1)
        return [Dispatch(self.name, "transform_landmarks.wgsl", params, bindings, (WG, 1, 1),
                         grid)]  # fmt: skip
