"""RESIZE_BILINEAR and RESIZE_NEAREST_NEIGHBOR on PHWC4 tensors (shaders/engine/resize.wgsl),
buffers or textures.

The scale is computed on the host in float32 exactly as TFLite does and baked in
as a literal that round-trips; the shader derives source indices per output
pixel in f32, so nearest-neighbour ties and bilinear taps match the reference.
Layouts of the work:
- up2: bilinear x2 with half-pixel centres (every resize in the MediaPipe models):
  an invocation writes a 2x2 output block from a 3x3 input neighbourhood
  (9 reads for 4 pixels instead of 16);
- otherwise BX neighbouring output pixels along x per invocation.
"""

from __future__ import annotations

import numpy as np

from engine.gpu.kernels import epilogue
from engine.gpu.kernels.base import (
    BuildContext,
    Dispatch,
    Kernel,
    Shape4,
    register,
    shape4,
    tensor_arg,
)
from engine.gpu.kernels.common import geometry
from engine.gpu.kernels.shape import WG, box, mappable
from engine.model.ir import Graph, Op
from engine.reference.resize import source_scale

BX = 2  # bilinear pixels per invocation outside up2: 2 beat 1 and 4 on lavapipe


def f32_literal(value: np.float32) -> str:
    """A float32 as a WGSL f32 literal with exactly the same value."""
    return f"{float(np.float32(value))!r}f"


def _flags(op: Op) -> tuple[bool, bool]:
    """(align_corners, half_pixel_centers)."""
    a = op.attrs
    return bool(a.get("align_corners", False)), bool(a.get("half_pixel_centers", False))


@register
class Resize(Kernel):
    """Bilinear (align_corners / half_pixel_centers) and nearest-neighbour resizing."""

    name = "resize"
    op_types = ("RESIZE_BILINEAR", "RESIZE_NEAREST_NEIGHBOR")
    storage_kinds = ("buffer", "texture")

    def accepts(self, op: Op, graph: Graph) -> bool:
        src, dst = op.inputs[0], op.outputs[0]
        align, half = _flags(op)
        return (
            not graph.tensors[src].is_constant
            and len(graph.tensors[src].shape) == 4
            and len(graph.tensors[dst].shape) == 4
            and mappable(graph, (src, dst))
            and not (align and half and op.type == "RESIZE_BILINEAR")  # TFLite rejects it
        )

    def build(self, op: Op, graph: Graph, ctx: BuildContext) -> list[Dispatch]:
        i, o = shape4(graph, op.inputs[0]), shape4(graph, op.outputs[0])
        align, half = _flags(op)
        bilinear = op.type == "RESIZE_BILINEAR"
        up2 = bilinear and half and not align and (o.h, o.w) == (2 * i.h, 2 * i.w)
        steps, extra = epilogue.build(op, graph, ctx=ctx)
        region, grid = box(Shape4(o.b, i.h, i.w, o.c)) if up2 else box(o, bx=BX if bilinear else 4)
        src_arg = tensor_arg(ctx, "src", op.inputs[0], "read")
        dst_arg = tensor_arg(ctx, "dst", op.outputs[0], "write")
        params = dict(
            **geometry(i, o),
            precision=ctx.precision,
            epilogue_type="f32",
            bilinear=bilinear,
            up2=up2,
            align_corners=align,
            half_pixel=half,
            scale_y=f32_literal(source_scale(i.h, o.h, align)),
            scale_x=f32_literal(source_scale(i.w, o.w, align)),
            out_c=o.c,
            box=region,
            steps=steps,
            src=src_arg,
            dst=dst_arg,
        )
        bindings = (src_arg["binding"], dst_arg["binding"])
        bindings = (*bindings, *extra)
        return [Dispatch(self.name, "resize.wgsl", params, bindings, (WG, 1, 1), grid)]
