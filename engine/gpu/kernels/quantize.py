"""QUANTIZE and DEQUANTIZE of activations in a quantized model run in float.

engine/transforms/quantized.py turns int8/uint8 activations into float tensors that
keep their grid. QUANTIZE (float -> grid, or a requantize between grids) rounds every
value to its output's grid and clamps it to the integer range; DEQUANTIZE rounds to
its input's grid, which leaves values already on it unchanged (TFLite's GPU delegate
turns both into QUANTIZE_AND_DEQUANTIZE the same way). One template,
shaders/engine/quantize.wgsl; an op still holding integer tensors is declined (the
engine then stops with a ModelError, never a float reinterpretation).
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
from engine.model.ir import Graph, Op

WG = 64


def _float_grid(op: Op, graph: Graph, tensor: int):
    """The grid of `tensor` when both of the op's tensors are float32, else None."""
    src, dst = graph.tensors[op.inputs[0]], graph.tensors[op.outputs[0]]
    if src.dtype != "float32" or dst.dtype != "float32":
        return None
    q = graph.tensors[tensor].quantization
    return q if q is not None and len(q.scale) == 1 else None


def build_quantize(name: str, op: Op, graph: Graph, ctx: BuildContext, grid) -> list[Dispatch]:
    """One dispatch: op.inputs[0] rounded to `grid` (a Quantization) into op.outputs[0]."""
    out = shape4(graph, op.outputs[0])
    steps, extra = epilogue.build(op, graph, ctx=ctx)
    src_arg = tensor_arg(ctx, "src", op.inputs[0], "read")
    dst_arg = tensor_arg(ctx, "dst", op.outputs[0], "write")
    params = dict(
        precision=ctx.precision,
        src=src_arg,
        dst=dst_arg,
        grid=epilogue.quant_step(grid),
        plane=out.rows * out.w,
        w=out.w,
        steps=steps,
    )
    bindings = (src_arg["binding"], dst_arg["binding"], *extra)
    grid = (ceil_div(out.rows * out.w, WG), out.s, 1)
    return [Dispatch(name, "quantize.wgsl", params, bindings, (WG, 1, 1), grid)]


@register
class Quantize(Kernel):
    """QUANTIZE float -> float on the output's grid (fake quantization)."""

    name = "quantize"
    storage_kinds = ("buffer", "texture")
    op_types = ("QUANTIZE",)

    def accepts(self, op: Op, graph: Graph) -> bool:
        return _float_grid(op, graph, op.outputs[0]) is not None

    def build(self, op: Op, graph: Graph, ctx: BuildContext) -> list[Dispatch]:
        grid = _float_grid(op, graph, op.outputs[0])
        return build_quantize(self.name, op, graph, ctx, grid)


@register
class Dequantize(Kernel):
    """DEQUANTIZE float -> float: the input's grid, so the real values pass unchanged."""

    name = "dequantize"
    storage_kinds = ("buffer", "texture")
    op_types = ("DEQUANTIZE",)

    def accepts(self, op: Op, graph: Graph) -> bool:
        return _float_grid(op, graph, op.inputs[0]) is not None

    def build(self, op: Op, graph: Graph, ctx: BuildContext) -> list[Dispatch]:
        grid = _float_grid(op, graph, op.inputs[0])
        return build_quantize(self.name, op, graph, ctx, grid)
