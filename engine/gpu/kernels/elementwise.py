"""Element-wise ops on PHWC4 tensors: the element-wise table's binary ops with numpy
broadcasting and its unary ops (engine/model/elementwise.py: the WGSL expression of each),
and PRELU.

One template (shaders/engine/elementwise.wgsl) for all of them: each invocation writes
V vec4 of one slice; operands are loaded by index expressions generated here
(same shape -> the output's own index; broadcast dims -> 0; a C=1 operand
against C>1 -> lane 0 replicated), the op is one WGSL expression over `a`/`b`,
then the epilogue, then padded lanes (c >= C) are forced to 0. Tensor operands
and the output are buffers or textures (shaders/engine/tensor.wgsl): each index comes
both flat and as texture coordinates.
Constant operands: a finite scalar is baked in as a literal; anything else is
packed to PHWC4 at load and bound as a uniform array when it fits (fp32),
else as a storage array.
"""

from __future__ import annotations

from dataclasses import astuple

import numpy as np

from engine.gpu.codegen import activation_expr, wgsl_float
from engine.gpu.kernels import epilogue
from engine.gpu.kernels.base import (
    Binding,
    BuildContext,
    Dispatch,
    Kernel,
    Shape4,
    ceil_div,
    register,
    shape4,
    tensor_arg,
)
from engine.gpu.kernels.common import pack_phwc4
from engine.model.elementwise import BINARY, UNARY
from engine.model.ir import Graph, Op

ZERO = "vec4<E>(0.0)"
PRELU = f"select(a * b, a, a >= {ZERO})"
WG = 64  # invocations per work group (1-D over the pixels of a slice)
V = 4  # vec4 per invocation: WG 64 x V 4 was best of 32-128 x 1-4 on lavapipe (~10-25%)


# --- helpers shared by the other element-wise style kernels (pool, pad, softmax) ---------
def lane_mask(c: int) -> str | None:
    """vec4<bool> of the lanes of the last slice that hold channels, None when C % 4 == 0."""
    rem = c % 4
    if rem == 0:
        return None
    return "vec4<bool>(" + ", ".join("true" if i < rem else "false" for i in range(4)) + ")"


def broadcastable(a: Shape4, out: Shape4) -> bool:
    """Every dim of `a` equals the output's or is 1 (numpy rules on the left-padded 4-D shapes)."""
    return all(x in (1, y) for x, y in zip(astuple(a), astuple(out), strict=True))


def operand_coords(a: Shape4, out: Shape4) -> tuple[str, str, str]:
    """WGSL u32 (x, row, slice) of operand `a` for output element (s, bi, y, x)."""
    sl = "s" if a.c == out.c else "0u"
    b = "bi" if a.b == out.b and a.b > 1 else "0u"
    y = "y" if a.h == out.h and a.h > 1 else "0u"
    x = "x" if a.w == out.w and a.w > 1 else "0u"
    row = "row" if (a.b, a.h) == (out.b, out.h) else f"{b} * {a.h}u + {y}"
    return x, row, sl


def index_expr(a: Shape4, out: Shape4) -> str:
    """WGSL u32 index into operand `a` for output element (s, bi, y, x) (names in the template)."""
    if a == out:
        return "i"
    x, row, sl = operand_coords(a, out)
    return f"({sl} * {a.rows}u + {row}) * {a.w}u + {x}"


def const_operand(data: np.ndarray, ctx: BuildContext, name: str) -> tuple[str, Binding | None]:
    """('literal', None) text for a finite scalar, else ('uniform'|'storage', its binding
    as the WGSL variable `name`)."""
    flat = np.asarray(data, np.float32).reshape(-1)
    limit = ctx.precision_info.max_value
    if flat.size == 1 and np.isfinite(flat[0]) and abs(flat[0]) <= limit:
        return f"vec4<E>({wgsl_float(flat[0])})", None
    packed = pack_phwc4(data)
    fits = ctx.precision_info.uniform_vec4_arrays and packed.nbytes <= ctx.max_uniform_bytes
    space = "uniform" if fits else "storage"
    wgsl = f"array<vec4<T>, {packed.size // 4}>"
    return space, Binding("const", data=packed, space=space, name=name, type=wgsl)


def build_elementwise(
    name: str,
    op: Op,
    graph: Graph,
    ctx: BuildContext,
    expr: str,
    inputs: list[int],
    includes: tuple[str, ...] = (),
) -> list[Dispatch]:
    """One dispatch computing `expr` over operands `inputs` (named a, b) into op.outputs[0]."""
    out = shape4(graph, op.outputs[0])
    dst = tensor_arg(ctx, "dst", op.outputs[0], "write")
    bindings = [dst["binding"]]
    operands = []
    for k, t in enumerate(inputs):
        var = "ab"[k]
        tensor, a = graph.tensors[t], shape4(graph, t)
        # A tensor operand: "t" for tensor.wgsl; a constant: its load from its own buffer;
        # "binding": the variable of either (None: a literal in the expression).
        o = {"var": var, "t": None, "binding": f"{var}_buf", "lane0": a.c == 1 and out.c > 1}
        if tensor.is_constant:
            load, binding = const_operand(tensor.data, ctx, f"{var}_buf")
            if binding is None:  # literal
                operands.append({**o, "load": load, "lane0": False, "binding": None})
                continue
            o["load"] = f"vec4<E>({var}_buf[{index_expr(a, out)}])"
        else:
            x, row, sl = ("x", "row", "s") if a == out else operand_coords(a, out)
            o["t"] = tensor_arg(ctx, f"{var}_buf", t, "read")
            o.update(index=index_expr(a, out), x=x, row=row, s=sl)
            binding = o["t"]["binding"]
        operands.append(o)
        bindings.append(binding)
    steps, extra = epilogue.build(op, graph, ctx=ctx)
    params = dict(
        precision=ctx.precision,
        epilogue_type="f32",
        dst=dst,
        operands=operands,
        expr=expr,
        includes=includes,
        plane=out.rows * out.w,
        w=out.w,
        h=out.h,
        slices=out.s,
        mask=lane_mask(out.c),
        v=V,
        steps=steps,
    )
    grid = (ceil_div(out.rows * out.w, WG * V), out.s, 1)
    bindings = (*bindings, *extra)
    return [Dispatch(name, "elementwise.wgsl", params, bindings, (WG, 1, 1), grid)]


def _operands_fit(op: Op, graph: Graph, inputs: list[int]) -> bool:
    out = shape4(graph, op.outputs[0])
    return all(t >= 0 and broadcastable(shape4(graph, t), out) for t in inputs)


@register
class Binary(Kernel):
    """ADD, SUB, MUL, DIV, MAXIMUM, MINIMUM with numpy broadcasting and fused activation."""

    name = "binary"
    storage_kinds = ("buffer", "texture")
    op_types = tuple(BINARY)

    def accepts(self, op: Op, graph: Graph) -> bool:
        return len(op.inputs) == 2 and _operands_fit(op, graph, list(op.inputs))

    def build(self, op: Op, graph: Graph, ctx: BuildContext) -> list[Dispatch]:
        return build_elementwise(
            f"{self.name}_{op.type.lower()}",
            op,
            graph,
            ctx,
            BINARY[op.type].wgsl,
            list(op.inputs),
        )


@register
class Unary(Kernel):
    """The element-wise table's unary ops: activations (GELU exact or tanh-approximate
    included), NEG, RSQRT."""

    name = "unary"
    storage_kinds = ("buffer", "texture")
    op_types = tuple(UNARY)

    def accepts(self, op: Op, graph: Graph) -> bool:
        return _operands_fit(op, graph, list(op.inputs[:1]))

    def build(self, op: Op, graph: Graph, ctx: BuildContext) -> list[Dispatch]:
        expr = activation_expr(op.type, "a", op.attrs)
        name, includes = f"{self.name}_{op.type.lower()}", UNARY[op.type].includes
        return build_elementwise(name, op, graph, ctx, expr, [op.inputs[0]], includes)


@register
class PRelu(Kernel):
    """PRELU: slopes (constant or tensor) broadcast against the input, e.g. [1,1,C]."""

    name = "prelu"
    storage_kinds = ("buffer", "texture")
    op_types = ("PRELU",)

    def accepts(self, op: Op, graph: Graph) -> bool:
        return len(op.inputs) == 2 and _operands_fit(op, graph, list(op.inputs))

    def build(self, op: Op, graph: Graph, ctx: BuildContext) -> list[Dispatch]:
        return build_elementwise(self.name, op, graph, ctx, PRELU, list(op.inputs))
