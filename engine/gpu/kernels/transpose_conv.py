"""TRANSPOSE_CONV and MediaPipe's Convolution2DTransposeBias on PHWC4 buffers.

Both are one gather kernel (shaders/engine/transpose_conv.wgsl): each output pixel sums the
input pixels whose taps land on it, so there are no write conflicts and no atomics.
An invocation computes a BY x BX block of outputs whose size is a multiple of the
stride: every output of the block then has a fixed stride phase, so its taps and the
input pixels they read are known when the shader is generated (`_plan`).

The ops differ only in inputs and padding:
- TRANSPOSE_CONV: inputs output_shape (constant), weights [O, kH, kW, I], data, optional
  bias; padding as for a forward conv from the output back to the input
  (pad_before(padding, out, k, stride)); a fused activation if present.
- Convolution2DTransposeBias (custom): inputs data, weights [O, kH, kW, I], bias;
  out = stride * (in - 1) + k - pad_total, SAME pad_total = max(0, k - (in - 1) % stride - 1),
  floor half before (docs/models.md, engine/reference/conv.py).
Weights are packed like conv.py's, uniform when they fit, split by output slices.
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
    tensor_arg,
)
from engine.gpu.kernels.common import (
    geometry,
    optional_input,
    pad_groups,
    uniform_groups,
    weight_bindings,
    workgroup_for,
)
from engine.gpu.kernels.conv import MAT4_BYTES, pack_bias, pack_conv_weights
from engine.model.ir import Graph, Op
from engine.reference.padding import pad_before

# Stride periods per block along (y, x): a block is (SH * RY) x (SW * RX) outputs.
# On lavapipe (4, 4) beat (1..2, 1..8): k3 s2 64x64x32->32 21.7 GFLOP/s vs 10.6 for (2, 2),
# k3 s1 32x32x16->16 17.1 vs 9.9, selfie k2 s2 128x128x16->1 0.73 ms vs 0.98 ms.
RY, RX = 4, 4
MAX_BLOCK_TAPS = 128  # mat-vecs per source slice in one invocation (code size, compile time)


def _plan(kh, kw, sh, sw, pad_top, pad_left, ry, rx):
    """Outputs of a block with their taps, and the input offsets they read."""
    by, bx = sh * ry, sw * rx
    outputs, offs_y, offs_x = [], [], []
    for dy in range(by):
        for dx in range(bx):
            taps = []
            for fy in range((dy + pad_top) % sh, kh, sh):
                oy = (dy + pad_top - fy) // sh
                for fx in range((dx + pad_left) % sw, kw, sw):
                    ox = (dx + pad_left - fx) // sw
                    offs_y += [oy] if oy not in offs_y else []
                    offs_x += [ox] if ox not in offs_x else []
                    taps.append(
                        {"iy": offs_y.index(oy), "ix": offs_x.index(ox), "tap": fy * kw + fx}
                    )
            outputs.append({"dy": dy, "dx": dx, "taps": taps})
    loads = sorted({(t["iy"], t["ix"]) for o in outputs for t in o["taps"]})
    return outputs, offs_y, offs_x, loads


class _TransposeBase(Kernel):
    data_input, bias_input = 0, 2
    storage_kinds = ("buffer", "texture")

    def accepts(self, op: Op, graph: Graph) -> bool:
        return graph.tensors[op.inputs[1]].is_constant

    def padding(self, op: Op, src, dst, kh: int, kw: int) -> tuple[int, int]:
        raise NotImplementedError

    def build(self, op: Op, graph: Graph, ctx: BuildContext) -> list[Dispatch]:
        data = op.inputs[self.data_input]
        src, dst = shape4(graph, data), shape4(graph, op.outputs[0])
        w = graph.tensors[op.inputs[1]].data
        bias = optional_input(op, graph, self.bias_input)
        _, kh, kw, _ = w.shape
        sh, sw = int(op.attrs.get("stride_h", 1)), int(op.attrs.get("stride_w", 1))
        top, left = self.padding(op, src, dst, kh, kw)
        packed = pack_conv_weights(w)
        biases = pack_bias(bias, dst.c)
        space, group = uniform_groups(dst.s, kh * kw * src.s * MAT4_BYTES, ctx)
        shared = group < dst.s
        if shared:
            packed, biases = pad_groups(packed, group), pad_groups(biases, group)
        # no larger than the output (in stride periods); one period in the compact set
        ry, rx = min(RY, ceil_div(dst.h, sh)), min(RX, ceil_div(dst.w, sw))
        if ctx.compact:
            ry = rx = 1
        while True:
            outputs, offs_y, offs_x, loads = _plan(kh, kw, sh, sw, top, left, ry, rx)
            taps = sum(len(o["taps"]) for o in outputs)
            if taps <= MAX_BLOCK_TAPS or ry == rx == 1:
                break
            ry, rx = (ry // 2, rx) if ry >= rx else (ry, rx // 2)
        by, bx = sh * ry, sw * rx
        tiles_x, tiles_y = ceil_div(dst.w, bx), ceil_div(dst.h, by)
        steps, extra = epilogue.build(op, graph, ctx=ctx)
        src_arg = tensor_arg(ctx, "src", data, "read")
        dst_arg = tensor_arg(ctx, "dst", op.outputs[0], "write")
        dispatches = []
        for base in range(0, dst.s, group):
            n = group if shared else min(group, dst.s - base)
            count = min(group, dst.s - base)
            wg = workgroup_for(tiles_x, dst.b * tiles_y, n)
            params = dict(
                **geometry(src, dst),
                precision=ctx.precision,
                epilogue_type="f32",
                dst_slices=n,
                slice_base=base,
                shared=shared,
                src_slices=src.s,
                batch=dst.b,
                kh=kh,
                kw=kw,
                by=by,
                bx=bx,
                ry=ry,
                rx=rx,
                tiles_x=tiles_x,
                tiles_y=tiles_y,
                outputs=outputs,
                offs_y=offs_y,
                offs_x=offs_x,
                loads=loads,
                steps=steps,
                src=src_arg,
                dst=dst_arg,
            )
            bindings = (
                src_arg["binding"],
                dst_arg["binding"],
                *weight_bindings(packed, biases, space, base, n, count if shared else None),
                *extra,
            )
            grid = (
                ceil_div(tiles_x, wg[0]),
                ceil_div(dst.b * tiles_y, wg[1]),
                ceil_div(count, wg[2]),
            )
            dispatches.append(
                Dispatch(self.name, "transpose_conv.wgsl", params, bindings, wg, grid)
            )
        return dispatches


@register
class TransposeConv(_TransposeBase):
    """Builtin TRANSPOSE_CONV: (output_shape, weights, data, bias?)."""

    name = "transpose_conv"
    op_types = ("TRANSPOSE_CONV",)
    data_input, bias_input = 2, 3

    def padding(self, op, src, dst, kh, kw):
        pad = op.attrs.get("padding", "VALID")
        a = op.attrs
        return (
            pad_before(pad, dst.h, kh, int(a.get("stride_h", 1))),
            pad_before(pad, dst.w, kw, int(a.get("stride_w", 1))),
        )


@register
class Convolution2DTransposeBias(_TransposeBase):
    """MediaPipe custom op: (data, weights, bias), output size from the input's."""

    name = "convolution_2d_transpose_bias"
    op_types = ("Convolution2DTransposeBias",)
    data_input, bias_input = 0, 2

    def padding(self, op, src, dst, kh, kw):
        a = op.attrs
        if a.get("padding", "VALID") != "SAME":
            return 0, 0
        sh, sw = int(a.get("stride_h", 1)), int(a.get("stride_w", 1))
        return (
            max(0, kh - (src.h - 1) % sh - 1) // 2,
            max(0, kw - (src.w - 1) % sw - 1) // 2,
        )
