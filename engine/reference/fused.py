"""What graph transforms add to ops, run the plain numpy way.

- attrs["input_scale"] = TENSOR: the input is first multiplied per channel by
  TENSOR (a squeeze-excite gate fused into the 1x1 conv that reads it);
- attrs["explicit_padding"] = (top, bottom, left, right): zero-pad the input
  (padded taps are zeros that count, as after a real PAD), then run the op
  with VALID padding;
- attrs["epilogue"]: steps applied to the op's output in order:
  ("act", NAME), ("add", TENSOR), ("mul", TENSOR), ("prelu", SLOPES),
  ("add_pool2", TENSOR): add the 2x2 stride-2 max pool of TENSOR (a folded
  MAX_POOL_2D, engine/transforms/fuse.py),
  ("quant", QUANTIZATION): round to that grid (fake quantization of a quantized
  model run in float, engine/transforms/quantized.py).
And the op a kernel fusion makes: DEPTHWISE_CONV_1X1 (engine/transforms/
fuse_depthwise.py), run as its two plain kernels in turn.
This keeps the kernels themselves plain TFLite and makes a transformed graph
runnable by the oracle, so every transform is checked against the original.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from engine.model.elementwise import UNARY
from engine.model.ir import Op
from engine.reference.conv import conv_2d, depthwise_conv_2d
from engine.reference.quantized.quantize import fake_quant
from engine.reference.registry import register


def has_extras(op: Op) -> bool:
    return any(k in op.attrs for k in ("explicit_padding", "input_scale")) or bool(
        op.attrs.get("epilogue")
    )


def run_with_extras(fn, op: Op, args: list, values: dict) -> list[np.ndarray]:
    """Call reference kernel `fn` on `op`, honouring input scale, padding and epilogue."""
    if "input_scale" in op.attrs:
        scale = values[op.attrs["input_scale"]]
        args = [args[0] * scale.reshape(args[0].shape[-1])] + args[1:]
    if "explicit_padding" in op.attrs:
        top, bottom, left, right = op.attrs["explicit_padding"]
        args = [np.pad(args[0], ((0, 0), (top, bottom), (left, right), (0, 0)))] + args[1:]
        attrs = {k: v for k, v in op.attrs.items() if k != "explicit_padding"}
        op = replace(op, attrs={**attrs, "padding": "VALID"})
    epilogue = op.attrs.get("epilogue", ())
    outs = fn(op, args)
    if not epilogue:
        return outs
    v = outs[0]
    for kind, arg in epilogue:
        if kind == "act":
            v = UNARY[arg].numpy(v, {})
            continue
        if kind == "quant":
            v = fake_quant(v, arg, arg.dtype or "int8")
            continue
        other = values[arg]
        if kind == "add_pool2":
            n, h, w, c = other.shape
            other = other.reshape(n, h // 2, 2, w // 2, 2, c).max(axis=(2, 4))
            kind = "add"
        if other.shape[:-1] == v.shape[:-1] and other.shape[-1] < v.shape[-1]:
            pad = [(0, 0)] * (other.ndim - 1) + [(0, v.shape[-1] - other.shape[-1])]
            other = np.pad(other, pad)  # a folded channel PAD: zeros beyond its channels
        elif other.shape != v.shape and other.size == v.shape[-1]:
            other = other.reshape(v.shape[-1])  # per-channel operand
        if kind == "add":
            v = v + other
        elif kind == "mul":
            v = v * other
        elif kind == "prelu":
            v = np.maximum(v, 0) + other * np.minimum(v, 0)
        else:
            raise ValueError(f"unknown epilogue step {kind}")
    return [v.astype(outs[0].dtype, copy=False)] + outs[1:]


@register("DEPTHWISE_CONV_1X1")
def depthwise_conv_1x1(op: Op, inputs: list) -> list:
    """A depthwise conv and the 1x1 conv reading it, fused: the depthwise with its own
    extras (padding, activations), then the 1x1 conv; its epilogue is the caller's
    (run_with_extras), its fused activation conv_2d's."""
    x, dw_w, dw_b, pw_w, pw_b = inputs
    dw = Op("DEPTHWISE_CONV_2D", (), (), dict(op.attrs["depthwise"]))
    mid = run_with_extras(depthwise_conv_2d, dw, [x, dw_w, dw_b], {})[0]
    conv_attrs = {k: v for k, v in op.attrs.items() if k not in ("depthwise", "epilogue")}
    return conv_2d(Op("CONV_2D", (), (), conv_attrs), [mid, pw_w, pw_b])
