"""MediaPipe's Landmarks2TransformMatrix (version 2) on the GPU: landmarks -> a 4x4 matrix.

face_landmark_with_attention computes, from its 468 mesh landmarks, the matrix of each
sub-crop (lips, eyes) that TransformTensorBilinear samples and TransformLandmarks maps
back with (engine/reference/landmark_ops.py has the definition, the oracle). One
invocation does it all: the subset has 71-80 points, so a loop beats any reduction.

- input: landmarks [1, N, 3]: PHWC4 (1, 1, N, 3), landmark i is vec4 i (x, y, z, 0);
  output: the matrix [1, 4, 4]: vec4 k is row k
- no trigonometry on the GPU (WGSL lets sin / cos err by 2^-11): the rotation
  r = target - atan2(dy, dx) of the L -> R line is taken as cos r, sin r from the
  line's unit vector and cos / sin of the constant target (host, float64), by the
  angle-difference identities; atan2(0, 0) = 0 as in C: the unit vector (1, 0)
- arithmetic in f32 at both precisions (fp16 stores the result only)
- the subset's indices are a private array of the shader (one pipeline per subset)
"""

from __future__ import annotations

import math

from engine.gpu.codegen import wgsl_float
from engine.gpu.kernels.base import BuildContext, Dispatch, Kernel, register, tensor_binding
from engine.model.ir import Graph, Op


@register
class LandmarksToTransformMatrix(Kernel):
    name = "landmarks_matrix"
    op_types = ("Landmarks2TransformMatrix",)

    def build(self, op: Op, graph: Graph, ctx: BuildContext) -> list[Dispatch]:
        a = op.attrs
        target = float(a["target_rotation_radians"])
        out_w, out_h = int(a["output_width"]), int(a["output_height"])
        params = dict(
            precision=ctx.precision,
            left=int(a["left_rotation_idx"]),
            right=int(a["right_rotation_idx"]),
            subset=[int(i) for i in a["subset_idxs"]],  # an odd last one pairs with itself
            cos_target=wgsl_float(math.cos(target)),
            sin_target=wgsl_float(math.sin(target)),
            # scale_x * width / output_width: the factor, then the division, as the C++
            scale_x=wgsl_float(a["scale_x"]),
            scale_y=wgsl_float(a["scale_y"]),
            out_w=wgsl_float(out_w),
            out_h=wgsl_float(out_h),
        )
        bindings = (
            tensor_binding(ctx, "landmarks", op.inputs[0], "read"),
            tensor_binding(ctx, "matrix", op.outputs[0], "write"),
        )
        return [Dispatch(self.name, "landmarks_matrix.wgsl", params, bindings, (1, 1, 1),
                         (1, 1, 1))]  # fmt: skip
