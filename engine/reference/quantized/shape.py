"""Integer data movement: the float kernels' moves on the integers, plus PAD,
CONCATENATION and RESIZE_BILINEAR whose integer forms differ.

- moves (RESHAPE, TRANSPOSE, SLICE, ..., RESIZE_NEAREST_NEIGHBOR): LiteRT copies the
  integers; its Prepare checks one grid in and out for most, the converter always
  writes one (a differing grid is copied as LiteRT does, not rescaled);
- PAD / PADV2: padded with the output zero point (the real 0), or PADV2's value;
- CONCATENATION: int8 inputs must share the output's grid (concatenation.cc);
- RESIZE_BILINEAR (reference_ops::ResizeBilinearInteger): 10-bit fixed-point source
  coordinates and weights, rounded half away from zero at 20 bits.
"""

from __future__ import annotations

import numpy as np

from engine.errors import ModelError
from engine.model.ir import Op
from engine.model.op_specs import SPECS
from engine.reference import registry
from engine.reference.quantized import OpTensors, register_quantized
from engine.reference.quantized.params import per_tensor
from engine.reference.registry import const_ints
from engine.reference.resize import output_size, resize_flags

MOVES = tuple(name for name, spec in SPECS.items() if spec.moves)  # engine/model/op_specs.py


@register_quantized(*MOVES)
def move(op: Op, inputs: list, ts: OpTensors) -> list:
    fn = registry.kernel(op.type)
    if fn is None:
        raise ModelError(f"{op.type} has no reference kernel")
    outs = fn(op, inputs)
    return [
        np.asarray(y).astype(t.dtype, copy=False) for y, t in zip(outs, ts.outputs, strict=True)
    ]


@register_quantized("PAD", "PADV2")
def pad(op: Op, inputs: list, ts: OpTensors) -> list:
    _, zero = per_tensor(ts.outputs[0])
    value = zero
    if op.type == "PADV2" and len(inputs) > 2 and inputs[2] is not None:
        value = int(np.asarray(inputs[2]).reshape(-1)[0])
    x = inputs[0]
    p = const_ints(inputs[1], "paddings", op)
    if len(p) != 2 * x.ndim:
        raise ModelError(f"{op.type}: paddings {p} do not fit a rank-{x.ndim} input")
    pairs = [(p[2 * i], p[2 * i + 1]) for i in range(x.ndim)]
    return [np.pad(x, pairs, constant_values=value).astype(ts.outputs[0].dtype)]


@register_quantized("CONCATENATION")
def concatenation(op: Op, inputs: list, ts: OpTensors) -> list:
    grid = per_tensor(ts.outputs[0])
    for t in ts.inputs:
        if t is not None and per_tensor(t) != grid:
            raise ModelError(
                f"CONCATENATION: input {t.name!r} is on another grid than the output "
                "(LiteRT's int8 kernel requires one)"
            )
    if op.attrs.get("fused_activation_function", "NONE") != "NONE":
        raise ModelError("CONCATENATION: int8 with a fused activation")
    axis = int(op.attrs.get("axis", 0))
    return [np.concatenate([t for t in inputs if t is not None], axis=axis)]


def _axis_10(out: int, size: int, scale_10: int, half: bool) -> tuple:
    """Per output index: 10-bit source coordinate, lower and upper source index."""
    v = np.arange(out, dtype=np.int64) * scale_10
    if half:
        v = v + scale_10 // 2 - (1 << 9)
    lo = np.maximum(np.trunc(v / 1024).astype(np.int64), 0)  # C division truncates
    hi = np.minimum(np.trunc((v + 1023) / 1024).astype(np.int64), size - 1)
    return v, lo, hi


def _scale_10(size: int, out: int, align: bool) -> int:
    if align and out > 1:
        return ((1 << 10) * (size - 1) + (out - 1) // 2) // (out - 1)
    return ((1 << 10) * size + out // 2) // out


@register_quantized("RESIZE_BILINEAR")
def resize_bilinear(op: Op, inputs: list, ts: OpTensors) -> list:
    if per_tensor(ts.inputs[0]) != per_tensor(ts.outputs[0]):
        raise ModelError("RESIZE_BILINEAR: input and output must share one quantization grid")
    x = np.asarray(inputs[0], np.int64)
    (oh, ow), (align, half) = output_size(op, inputs), resize_flags(op)
    _, h, w, _ = x.shape
    vy, y0, y1 = _axis_10(oh, h, _scale_10(h, oh, align), half)
    vx, x0, x1 = _axis_10(ow, w, _scale_10(w, ow, align), half)
    fy = (vy - 1024 * y0)[None, :, None, None]
    fx = (vx - 1024 * x0)[None, None, :, None]
    top, bot = x[:, y0], x[:, y1]
    total = (
        top[:, :, x0] * (1024 - fy) * (1024 - fx)
        + bot[:, :, x0] * fy * (1024 - fx)
        + top[:, :, x1] * (1024 - fy) * fx
        + bot[:, :, x1] * fy * fx
    )
    rounded = np.where(total > 0, total + (1 << 19), total - (1 << 19))
    y = np.where(rounded >= 0, rounded >> 20, -((-rounded) >> 20))  # C division truncates
    return [y.astype(ts.outputs[0].dtype)]
