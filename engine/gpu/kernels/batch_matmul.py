"""BATCH_MATMUL on PHWC4 tensors: out[.., m, n] = sum_k x[.., m, k] * y[.., k, n].

Every operand of rank 2-4 maps to (B, H, W, C) with its last two axes as (W, C): the
matrix rows are pixels of one row of the tensor, the columns its channels; leading axes
are (B, H) and broadcast (numpy rules). One invocation per output vec4 (4 columns n of
one row m) walks k in steps of 4:
- x: one vec4 of k values (adj_x: x is [.., K, M], 4 reads of lane m % 4);
- y: 4 vec4 of n values, one per k (adj_y: y is [.., N, K], 4 vec4 of k values, one
  per n, combined with dot products).
f32 accumulation at both precisions. Operands are graph tensors or constants (packed
PHWC4, bound as storage). Padded lanes stay 0: x's padded k lanes are 0 and k >= K
reads are skipped; n >= N columns read y's zero lanes or are skipped (adj_y).
"""

from __future__ import annotations

from engine.gpu.kernels import epilogue
from engine.gpu.kernels.base import (
    Binding,
    BuildContext,
    Dispatch,
    Kernel,
    ceil_div,
    register,
    shape4,
    tensor_binding,
)
from engine.gpu.kernels.common import pack_phwc4
from engine.gpu.kernels.shape import mappable
from engine.model.ir import Graph, Op

WG = 64  # invocations per work group, 1-D over the output pixels of one slice


def _operand(graph: Graph, t: int, name: str, ctx: BuildContext) -> tuple[dict, Binding]:
    """Operand `t` as WGSL variable `name`: its geometry and its binding."""
    tensor, s4 = graph.tensors[t], shape4(graph, t)
    info = {"b": s4.b, "h": s4.h, "rows": s4.rows, "w": s4.w, "c": s4.c}
    if tensor.is_constant:
        data = pack_phwc4(tensor.data)
        return info, Binding("const", data=data, name=name, type="array<vec4<T>>")
    return info, tensor_binding(ctx, name, t, "read")


def _batch_row(a: dict, out) -> str:
    """WGSL row of operand `a` for output batch coordinates (ob, oh), broadcasting."""
    b = "ob" if a["b"] == out.b and a["b"] > 1 else "0u"
    h = "oh" if a["h"] == out.h and a["h"] > 1 else "0u"
    return f"{b} * {a['h']}u + {h}"


@register
class BatchMatMul(Kernel):
    name = "batch_matmul"
    op_types = ("BATCH_MATMUL",)

    def accepts(self, op: Op, graph: Graph) -> bool:
        x, y = op.inputs[0], op.inputs[1]
        ranks = [len(graph.tensors[t].shape) for t in (x, y, op.outputs[0])]
        return all(2 <= r <= 4 for r in ranks) and mappable(graph, (x, y, op.outputs[0]))

    def build(self, op: Op, graph: Graph, ctx: BuildContext) -> list[Dispatch]:
        out = shape4(graph, op.outputs[0])
        x, xb = _operand(graph, op.inputs[0], "xs", ctx)
        y, yb = _operand(graph, op.inputs[1], "ys", ctx)
        adj_x, adj_y = bool(op.attrs.get("adj_x")), bool(op.attrs.get("adj_y"))
        k = x["w"] if adj_x else x["c"]
        steps, extra = epilogue.build(op, graph)
        params = dict(
            precision=ctx.precision,
            epilogue_type="f32",
            x=x,
            y=y,
            x_row=_batch_row(x, out),
            y_row=_batch_row(y, out),
            adj_x=adj_x,
            adj_y=adj_y,
            k=k,
            k4=ceil_div(k, 4),
            n=out.c,
            out_h=out.h,
            out_w=out.w,
            plane=out.rows * out.w,
            steps=steps,
        )
        bindings = (tensor_binding(ctx, "dst", op.outputs[0], "write"), xb, yb, *extra)
        grid = (ceil_div(out.rows * out.w, WG), out.s, 1)
        return [Dispatch(self.name, "batch_matmul.wgsl", params, bindings, (WG, 1, 1), grid)]
