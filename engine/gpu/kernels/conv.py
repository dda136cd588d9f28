"""CONV_2D on PHWC4 tensors (buffers or textures).

Weights are packed at load into mat4x4 blocks [dst slice][ky][kx][src slice]
(column j = output lane j). They go in a uniform buffer when they fit the
binding limit (3-4x faster than storage reads on lavapipe, see
docs/benchmarks.md); larger layers are split by output slices into several
dispatches, each with its own uniform block, rather than read from storage.
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
from engine.gpu.kernels.common import (
    MAX_SPLITS,
    geometry,
    optional_input,
    uniform_groups,
    weight_bindings,
)
from engine.gpu.kernels.tile_tables import conv_slices
from engine.gpu.kernels.workgroup_choice import pick, work_shapes
from engine.gpu.workgroups import Candidate, KernelSignature, WorkShape
from engine.model.ir import Graph, Op
from engine.reference.padding import pad_before

MAT4_BYTES = 64
# Work shapes (pixels x 1 x output slices per invocation) offered to the selector
# after the table's: the grid the table was measured over, most work per invocation
# (P x Z outputs) first; ties: x nearer 4, the table's.
CONV_WORK = tuple(
    sorted(
        (WorkShape(x, 1, z) for x in (4, 2, 8, 1) for z in (4, 2, 1)),
        key=lambda w: (-w.volume, abs(w.x - 4), -w.z),
    )
)


def pack_conv_weights(w: np.ndarray) -> np.ndarray:
    """[O, kH, kW, I] -> [S_out, kH, kW, S_in, 4 (out lane), 4 (in lane)] float32, zero padded."""
    o, kh, kw, i = w.shape
    so, si = ceil_div(o, 4), ceil_div(i, 4)
    padded = np.zeros((so * 4, kh, kw, si * 4), np.float32)
    padded[:o, :, :, :i] = w
    blocks = padded.reshape(so, 4, kh, kw, si, 4)  # [so, lane_o, kh, kw, si, lane_i]
    return np.ascontiguousarray(blocks.transpose(0, 2, 3, 4, 1, 5))


def pack_bias(b: np.ndarray | None, channels: int) -> np.ndarray:
    out = np.zeros(ceil_div(channels, 4) * 4, np.float32)
    if b is not None:
        out[:channels] = b
    return out.reshape(-1, 4)


def conv_padding(op: Op, in_hw: tuple[int, int], k_hw: tuple[int, int]) -> tuple[int, int]:
    """(top, left) zero padding: explicit (from a merged PAD) or TFLite SAME/VALID."""
    if "explicit_padding" in op.attrs:
        top, _, left, _ = op.attrs["explicit_padding"]
        return top, left
    a = op.attrs
    return (
        pad_before(a["padding"], in_hw[0], k_hw[0], a["stride_h"], a.get("dilation_h_factor", 1)),
        pad_before(a["padding"], in_hw[1], k_hw[1], a["stride_w"], a.get("dilation_w_factor", 1)),
    )


def _needs_bounds(src, dst, op: Op, k_hw: tuple[int, int], pad: tuple[int, int]) -> bool:
    """Can a tap fall outside the input? (Not for VALID convs: then no masks.)"""
    a = op.attrs
    for size, out, k, stride, dil, before in (
        (src.h, dst.h, k_hw[0], a["stride_h"], a.get("dilation_h_factor", 1), pad[0]),
        (src.w, dst.w, k_hw[1], a["stride_w"], a.get("dilation_w_factor", 1), pad[1]),
    ):
        last = (out - 1) * stride + (k - 1) * dil - before
        if before > 0 or last >= size:
            return True
    return False


@register
class Conv2D(Kernel):
    """Generic convolution: any kernel size, stride, dilation, padding."""

    name = "conv2d"
    op_types = ("CONV_2D",)
    priority = 100
    storage_kinds = ("buffer", "texture")

    def accepts(self, op: Op, graph: Graph) -> bool:
        # input_scale (a fused gate) is only in conv1x1; elsewhere the CPU runs it. So do
        # grouped convs (input channels a multiple of the filter's): one group only here.
        w = graph.tensors[op.inputs[1]]
        return (
            w.is_constant
            and "input_scale" not in op.attrs
            and shape4(graph, op.inputs[0]).c == w.shape[3]
        )

    def build(self, op: Op, graph: Graph, ctx: BuildContext) -> list[Dispatch]:
        src, dst = shape4(graph, op.inputs[0]), shape4(graph, op.outputs[0])
        w = graph.tensors[op.inputs[1]].data
        bias = optional_input(op, graph, 2)
        _, kh, kw, _ = w.shape
        packed = pack_conv_weights(w)
        biases = pack_bias(bias, dst.c)
        top, left = conv_padding(op, (src.h, src.w), (kh, kw))
        per_slice = kh * kw * src.s * MAT4_BYTES
        space, group = uniform_groups(dst.s, per_slice, ctx, max_splits=MAX_SPLITS)
        # Table: 4 pixels x 4 slices per invocation, 8x8 work groups: best of the grid
        # bx in {2,4,8} x bs in {1,2,4} x wg in {8x4, 8x8, 16x4, 32x1} measured on
        # lavapipe with /tmp benchmarks (docs/benchmarks.md, "conv kernel").
        most = conv_slices(ctx.adapter, 4)
        bx, bs = min(4, dst.w), min(most, dst.s)
        bounds = _needs_bounds(src, dst, op, (kh, kw), (top, left))
        kind = space.split(",")[0]

        def dispatch(base: int, n: int, c: Candidate) -> Dispatch:
            steps, extra = epilogue.build(op, graph, ctx=ctx)
            src_arg = tensor_arg(ctx, "src", op.inputs[0], "read")
            dst_arg = tensor_arg(ctx, "dst", op.outputs[0], "write")
            params = dict(
                **geometry(src, dst),
                precision=ctx.precision,
                epilogue_type="f32",
                src=src_arg,
                dst=dst_arg,
                dst_slices=n,
                slice_base=base,
                src_slices=src.s,
                bx=c.work.x,
                bs=c.work.z,
                bounds=bounds,
                loop_taps=ctx.compact,
                kh=kh,
                kw=kw,
                stride_h=op.attrs["stride_h"],
                stride_w=op.attrs["stride_w"],
                dil_h=op.attrs.get("dilation_h_factor", 1),
                dil_w=op.attrs.get("dilation_w_factor", 1),
                pad_top=top,
                pad_left=left,
                steps=steps,
            )
            bindings = (
                src_arg["binding"],
                dst_arg["binding"],
                *weight_bindings(packed, biases, space, base, n),
                *extra,
            )
            grid = c.groups((dst.w, dst.rows, n))
            return Dispatch(self.name, "conv2d.wgsl", params, bindings, c.workgroup, grid)

        first = min(group, dst.s)
        sig = KernelSignature(
            self.name,
            (dst.w, dst.rows, first),
            "conv",
            ctx.precision_info.vec4_bytes,
            work_shapes(WorkShape(bx, 1, bs), *(w for w in CONV_WORK if w.z <= most)),
            (
                ("k", f"{kh}x{kw}"),
                ("stride", f"{op.attrs['stride_h']}x{op.attrs['stride_w']}"),
                ("src", f"{src.w}x{src.rows}x{src.s}"),
                ("weights", kind),
                ("bounds", int(bounds)),
                ("io", ctx.kind(op.inputs[0]) + "," + ctx.kind(op.outputs[0])),
                ("precision", ctx.precision),
            ),
        )
        table = Candidate((8, 8, 1), WorkShape(bx, 1, bs))
        c = pick(sig, ctx, table, lambda c: dispatch(0, first, c))
        return [dispatch(base, min(group, dst.s - base), c) for base in range(0, dst.s, group)]
