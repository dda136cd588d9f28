"""CONV_2D 1x1 (stride 1, no padding) as a tiled GEMM: shaders/engine/gemm.wgsl.

out[so][p] = bias[so] + sum_si src[si][p] * W[so][si] over the flattened rows*W pixels.
A work group covers WG x BP pixels and BS output slices (workgroup_id.y), so weight
addresses are the same for every invocation of a group (loaded once, broadcast) and
neighbouring invocations read neighbouring pixels; each invocation keeps BP x BS vec4
accumulators (register blocking). With `shared_k` the group stages its weights in
workgroup memory, SHARED_K source slices at a time. The tile (WG, BP, BS, shared_k,
weights in uniform or storage) comes from tiles.gemm_tile by adapter class and layer
shape, deterministically; conv1x1.build hands a layer to `build_gemm` when the table
has a tile for the adapter class (None: conv1x1's own kernel, the measured best on
lavapipe and SwiftShader). Weights sit in one binding (no split dispatches): a uniform
block when they fit, else storage.
"""

from __future__ import annotations

import numpy as np

from engine.gpu.kernels import epilogue
from engine.gpu.kernels.base import Binding, BuildContext, Dispatch, ceil_div, shape4, tensor_arg
from engine.gpu.kernels.common import optional_input
from engine.gpu.kernels.conv import MAT4_BYTES, pack_bias, pack_conv_weights
from engine.gpu.kernels.tile_tables import GemmTile
from engine.model.ir import Graph, Op

NAME = "gemm1x1"


def _dims(*values: int) -> Binding:
    """The geometry uniform of a shared pipeline (f32: exact below 2**24)."""
    data = np.array(values, np.float32)
    return Binding("const", data=data, space="uniform", dtype="f32", name="dims", type="vec4<A>")


def build_gemm(op: Op, graph: Graph, ctx: BuildContext, tile: GemmTile) -> list[Dispatch]:
    """The one dispatch of a 1x1 conv (what conv1x1 accepts) with GEMM tile `tile`."""
    src, dst = shape4(graph, op.inputs[0]), shape4(graph, op.outputs[0])
    w = graph.tensors[op.inputs[1]].data
    packed = pack_conv_weights(w).reshape(-1)
    biases = pack_bias(optional_input(op, graph, 2), dst.c).reshape(-1)
    pixels = dst.rows * dst.w
    fits = dst.s * src.s * MAT4_BYTES <= ctx.max_uniform_bytes
    space = "uniform" if tile.uniform and fits and not tile.dims else "storage, read"
    gate = op.attrs.get("input_scale")
    scale = None if gate is None else tensor_arg(ctx, "in_scale", gate, "read")
    steps, extra = epilogue.build(op, graph, ctx=ctx, flat="s * P + p")
    src_arg = tensor_arg(ctx, "src", op.inputs[0], "read")
    dst_arg = tensor_arg(ctx, "dst", op.outputs[0], "write")
    params = dict(
        precision=ctx.precision,
        src=src_arg,
        dst=dst_arg,
        dst_slices=dst.s,
        src_slices=src.s,
        pixels=pixels,
        out_w=dst.w,
        bp=tile.bp,
        bs=tile.bs,
        shared_k=min(tile.shared_k, src.s),
        dims=tile.dims,
        scale=scale,
        steps=steps,
    )
    kind = space.split(",")[0]
    # runtime-sized arrays in a shared pipeline (dims: any layer), else sized by the layer
    mat4s, vec4s = (
        ("array<mat4x4<A>>", "array<vec4<A>>") if tile.dims
        else (f"array<mat4x4<A>, {dst.s * src.s}>", f"array<vec4<A>, {dst.s}>")
    )  # fmt: skip
    bindings = (
        src_arg["binding"],
        dst_arg["binding"],
        Binding("const", data=packed, space=kind, dtype="f32", name="weights", type=mat4s),
        Binding("const", data=biases, space=kind, dtype="f32", name="bias", type=vec4s),
        *([_dims(pixels, dst.w, src.s, dst.s)] if tile.dims else []),
        *([scale["binding"]] if scale is not None else []),
        *extra,
    )  # fmt: skip
    grid = (ceil_div(pixels, tile.wg * tile.bp), ceil_div(dst.s, tile.bs), 1)
    return [Dispatch(NAME, "gemm.wgsl", params, bindings, (tile.wg, 1, 1), grid)]
