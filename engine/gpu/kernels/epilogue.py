"""Epilogues: what a kernel does to each output vec4 before storing it.

An op's epilogue is its own fused activation plus whatever the fusion
transforms appended in `op.attrs["epilogue"]`: a tuple of steps
  ("act", NAME)          activation (RELU, RELU6, TANH, LOGISTIC, HARD_SWISH...)
  ("add", TENSOR_ID)     element-wise add of another tensor (e.g. a residual)
  ("mul", TENSOR_ID)     element-wise multiply (e.g. squeeze-excite gating)
  ("prelu", TENSOR_ID)   PReLU with per-channel slopes
  ("add_pool2", TENSOR_ID) add the max of the 2x2 window at (2x, 2y) of a tensor twice
                         the output's size (a folded 2x2 stride-2 MAX_POOL_2D)
  ("quant", QUANTIZATION) fake quantization: round to that grid and clamp to its
                         integer range, in f32 (a quantized model run in float,
                         engine/transforms/quantized.py)
An operand is the output's own shape (indexed like the output), the same
shape with fewer channels (an add whose channel PAD was folded away: zero
beyond its slices), or one value per channel ([C], [1,1,C], [1,1,1,C]).
Tensor operands are read through shaders/engine/tensor.wgsl: buffers, or textures when the
kernel passes its BuildContext (texture-capable kernels do; the others get buffers,
which engine/gpu/placement.py guarantees).
"""

from __future__ import annotations

import numpy as np

from engine.gpu.codegen import activation_expr
from engine.gpu.kernels.base import Binding, BuildContext, Shape4, shape4, tensor_arg
from engine.gpu.kernels.params import Params
from engine.model.elementwise import UNARY, fused_steps
from engine.model.ir import Graph, Op
from engine.transforms.quantized import grid_step


def steps_of(op: Op) -> list[tuple]:
    act = op.attrs.get("fused_activation_function", "NONE")
    return [*fused_steps(act), *op.attrs.get("epilogue", ())]


def build(
    op: Op,
    graph: Graph,
    ctx: BuildContext | None = None,
    flat: str | None = None,
    params: Params | None = None,
) -> tuple[list[dict], list[Binding]]:
    """Template steps and the extra bindings they need (operands ep0, ep1, ...: the
    kernel appends them to its own; epilogue.wgsl `declare` places their declarations).

    `ctx`: where tensor operands live (textures); None: every operand is a buffer.
    `flat`: the caller's own WGSL expression of a full-size operand's buffer index
    (e.g. "s * P + p" with P a runtime value), instead of one with the shape as constants.
    `params`: the caller's run-time shapes (the compact set's shared kernels,
    engine/gpu/kernels/params.py): texture operands read their tiles from it."""
    ctx = ctx or BuildContext()
    out = shape4(graph, op.outputs[0])
    full = flat or f"(s * {out.rows}u + row) * {out.w}u + x"
    steps, bindings = [], []
    for kind, arg in steps_of(op):
        if kind == "act":
            steps.append({"kind": "act", "expr": activation_expr(arg, "v"), "binding": None})
            continue
        if kind == "quant":
            steps.append(quant_step(arg))
            continue
        tensor, operand = graph.tensors[arg], shape4(graph, arg)
        name = f"ep{len(bindings)}"
        guard, taps = 0, None
        # flat buffer index and texture coordinates (x, row, layer)
        if kind == "add_pool2":  # four reads (taps), not one at (index, coords)
            taps = pool2_taps(operand, out, tensor.name, _dims(operand, name, params))
            index, coords = None, (None, None)
            guard = operand.s if operand.c < out.c else 0  # channel-padded operand
        elif operand == out:
            index, coords = full, ("x", "row")
        elif (operand.b, operand.h, operand.w) == (out.b, out.h, out.w) and operand.c < out.c:
            index, coords = full, ("x", "row")
            guard = operand.s  # channel-padded operand
            if kind != "add":
                raise ValueError(f"epilogue {kind} of {tensor.name}: fewer channels only for add")
        elif int(np.prod(tensor.shape)) == out.c:
            index, coords = "s", ("0u", "0u")  # one value per channel
        else:
            raise ValueError(f"epilogue operand {tensor.name} {tensor.shape} does not fit {out}")
        if tensor.is_constant:
            if index != "s":
                raise ValueError(f"constant full-size epilogue operand {tensor.name}")
            data = _pack_channels(tensor.data, out.c)
            binding = Binding("const", data=data, name=name, type="array<vec4<T>>")
            arg_ = {"name": name, "kind": "buffer"}
        else:
            arg_ = tensor_arg(ctx, name, arg, "read")
            binding = arg_["binding"]
            if params is not None:
                arg_ = params.add_tiles(arg_)
        bound = ""  # the slice bound of a channel-padded operand, a WGSL u32 expression
        if guard and params is not None:
            params.add(f"{name}_guard", "u32", guard)
            bound = f"G.{name}_guard"
        elif guard:
            bound = f"{guard}u"
        steps.append({"kind": kind, "name": name, "index": index, "x": coords[0],
                      "row": coords[1], "guard": bound, "binding": name,
                      "tensor": arg_, "taps": taps})  # fmt: skip
        bindings.append(binding)
    if out.c % 4 and any(kind == "act" and not UNARY[arg].keeps_zero for kind, arg in steps_of(op)):
        # e.g. sigmoid(0) = 0.5: keep the padded lanes of the last slice at zero.
        keep = ", ".join("1.0" if lane < out.c % 4 else "0.0" for lane in range(4))
        steps.append({"kind": "mask", "last": out.s - 1, "keep": keep, "binding": None})
    return steps, bindings


def _dims(operand: Shape4, name: str, params: Params | None) -> tuple[str, str]:
    """(rows, width) of an operand as WGSL u32 expressions: literals, or fields of G."""
    if params is None:
        return f"{operand.rows}u", f"{operand.w}u"
    params.add(f"{name}_rows", "u32", operand.rows)
    params.add(f"{name}_w", "u32", operand.w)
    return f"G.{name}_rows", f"G.{name}_w"


def pool2_taps(
    operand: Shape4, out: Shape4, name: str, dims: tuple[str, str] | None = None
) -> list[dict]:
    """Buffer index and texture coordinates of the 2x2 window at (2x, 2row) of `operand`
    for each output (x, row, slice s): an ("add_pool2", operand) step's four reads.
    `dims`: the operand's (rows, width) as WGSL expressions (default: literals)."""
    if (operand.b, operand.h, operand.w) != (1, 2 * out.h, 2 * out.w) or operand.c > out.c:
        raise ValueError(f"epilogue add_pool2 of {name} {operand}: not twice the size of {out}")
    rows, width = dims or (f"{operand.rows}u", f"{operand.w}u")
    taps = []
    for dy in (0, 1):
        for dx in (0, 1):
            x, row = f"(2u * x + {dx}u)", f"(2u * row + {dy}u)"
            index = f"(s * {rows} + {row}) * {width} + {x}"
            taps.append({"index": index, "x": x, "row": row})
    return taps


def quant_step(q) -> dict:
    """Template values of a fake-quant step on grid `q` (a Quantization)."""
    scale, zero, lo, hi = grid_step(q)
    literal = np.format_float_scientific(np.float32(scale), unique=True, trim="0")
    return {"kind": "quant", "scale": literal, "zero": f"{zero}.0",
            "lo": f"{lo}.0", "hi": f"{hi}.0", "binding": None}  # fmt: skip


def _pack_channels(values: np.ndarray, channels: int) -> np.ndarray:
    """Per-channel constants as vec4 slices, zero padded."""
    flat = np.zeros(-(-channels // 4) * 4, np.float32)
    flat[:channels] = np.asarray(values, np.float32).reshape(-1)[:channels]
    return flat
