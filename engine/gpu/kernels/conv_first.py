"""CONV_2D with few input channels (C_in <= 4): the input image layer of vision models.

face_detection_short_range (128x128x3, 5x5 stride 2 -> 24), face_landmark and
selfie_segmentation (3x3 stride 2 -> 16) all open with one. The generic conv reads a
mat4x4 of uniform weights per tap for a single source slice: on SwiftShader that layer
alone took 57 ms of face detection's 80 (0.25 GFLOP/s). Here the weights are WGSL
literals (a first layer has at most MAX_WEIGHTS of them), the input footprint of a
BY x BX output block is loaded once, and each input lane multiplies a vec4 of output
lanes (C_in * 4 FMAs per tap and slice instead of 16). One invocation covers all output
slices of its group (gid.z picks the group through a switch: one pipeline per layer).
Registered ahead of conv1x1 and the generic conv (priority 40).
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
from engine.gpu.kernels.common import geometry, optional_input, workgroup_for
from engine.gpu.kernels.conv import conv_padding
from engine.gpu.kernels.tile_tables import first_layer_tile
from engine.model.ir import Graph, Op

MAX_IN_CHANNELS = 4
MAX_WEIGHTS = 8192  # literals in one shader (face detection's first layer: 1800)


def literal(x: float) -> str:
    """A WGSL float literal that parses back to the same float32."""
    text = repr(float(np.float32(x)))
    return text if ("." in text or "e" in text) else text + ".0"


def tap_plan(kh: int, kw: int, sh: int, sw: int, by: int, bx: int) -> list[list[tuple]]:
    """For each footprint row: [(oy, ox, footprint column, tap index)] of its taps."""
    plan = []
    for r in range((by - 1) * sh + kh):
        taps = []
        for oy in range(by):
            ky = r - oy * sh
            if 0 <= ky < kh:
                taps += [
                    (oy, ox, ox * sw + kx, ky * kw + kx) for ox in range(bx) for kx in range(kw)
                ]
        plan.append(taps)
    return plan


def slice_groups(w: np.ndarray, bias: np.ndarray | None, per_group: int) -> list[dict]:
    """Weights [O, kH, kW, I] as literal strings per group of output slices:
    weights[s][tap][input lane] = "o0, o1, o2, o3" (output lanes of slice s), bias[s]."""
    o, kh, kw, i = w.shape
    so = ceil_div(o, 4)
    wp = np.zeros((so * 4, kh * kw, i), np.float32)
    wp[:o] = w.reshape(o, kh * kw, i)
    bp = np.zeros(so * 4, np.float32)
    if bias is not None:
        bp[:o] = bias
    lanes = wp.reshape(so, 4, kh * kw, i).transpose(0, 2, 3, 1)  # [so, tap, in lane, out lane]
    groups = []
    for g0 in range(0, so, per_group):
        ss = range(g0, min(so, g0 + per_group))
        groups.append({
            "slices": list(ss),
            "weights": {s: [[", ".join(map(literal, lanes[s, t, c])) for c in range(i)]
                            for t in range(kh * kw)] for s in ss},
            "bias": {s: ", ".join(map(literal, bp[s * 4 : s * 4 + 4])) for s in ss},
        })  # fmt: skip
    return groups


@register
class ConvFirst(Kernel):
    """C_in <= 4, no dilation, constant weights of at most MAX_WEIGHTS values."""

    name = "conv_first"
    op_types = ("CONV_2D",)
    priority = 40
    storage_kinds = ("buffer", "texture")
    compact = False  # its literal weights are the shader: the generic conv in the compact set

    def accepts(self, op: Op, graph: Graph) -> bool:
        w = graph.tensors[op.inputs[1]]
        a = op.attrs
        return (
            w.is_constant
            and "input_scale" not in op.attrs
            and w.shape[3] <= MAX_IN_CHANNELS
            and shape4(graph, op.inputs[0]).c == w.shape[3]
            and int(np.prod(w.shape)) <= MAX_WEIGHTS
            and a.get("dilation_h_factor", 1) == 1
            and a.get("dilation_w_factor", 1) == 1
        )

    def build(self, op: Op, graph: Graph, ctx: BuildContext) -> list[Dispatch]:
        src, dst = shape4(graph, op.inputs[0]), shape4(graph, op.outputs[0])
        w = graph.tensors[op.inputs[1]].data
        _, kh, kw, cin = w.shape
        sh, sw = op.attrs["stride_h"], op.attrs["stride_w"]
        top, left = conv_padding(op, (src.h, src.w), (kh, kw))
        tile = first_layer_tile(ctx.adapter, kh, sh)
        by, bx = min(tile.by, dst.h), min(tile.bx, dst.w)
        groups = slice_groups(w, optional_input(op, graph, 2), min(tile.slices, dst.s))
        tiles_y = ceil_div(dst.h, by)
        nx, ny = ceil_div(dst.w, bx), dst.b * tiles_y
        wg = workgroup_for(nx, ny, 1)
        steps, extra = epilogue.build(op, graph, ctx=ctx)
        src_arg = tensor_arg(ctx, "src", op.inputs[0], "read")
        dst_arg = tensor_arg(ctx, "dst", op.outputs[0], "write")
        params = dict(
            **geometry(src, dst),
            precision=ctx.precision,
            src=src_arg,
            dst=dst_arg,
            batch=dst.b,
            in_c=cin,
            stride_h=sh,
            stride_w=sw,
            pad_top=top,
            pad_left=left,
            by=by,
            bx=bx,
            tiles_y=tiles_y,
            foot_w=(bx - 1) * sw + kw,
            plan=tap_plan(kh, kw, sh, sw, by, bx),
            groups=groups,
            steps=steps,
        )
        bindings = (src_arg["binding"], dst_arg["binding"], *extra)
        grid = (ceil_div(nx, wg[0]), ceil_div(ny, wg[1]), len(groups))
        return [Dispatch(self.name, "conv_first.wgsl", params, bindings, wg, grid)]
