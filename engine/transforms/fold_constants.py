"""Fold MUL / ADD by a constant into the conv or depthwise conv before it.

  conv(x) * s  -> conv with weights * s (per output channel), bias * s
  conv(x) + c  -> conv with bias + c
The constant is a scalar or one value per output channel. The conv must have
no fused activation or epilogue yet and its output exactly one reader; the
MUL/ADD's own fused activation becomes the conv's. New constant tensors are
appended (weights may be shared, so they are never changed in place).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from engine.model.ir import Graph, Tensor
from engine.transforms.base import PassResult, sole_consumer, with_attrs

_CONVS = {"CONV_2D", "DEPTHWISE_CONV_2D"}


def _per_channel(value: np.ndarray, channels: int) -> np.ndarray | None:
    flat = np.asarray(value, np.float32).reshape(-1)
    if flat.size == 1:
        return np.full(channels, flat[0], np.float32)
    if flat.size == channels and value.shape[-1] == channels:
        return flat
    return None


def fold_mul_add(graph: Graph) -> tuple[Graph, PassResult]:
    result = PassResult("fold_mul_add")
    tensors = list(graph.tensors)
    i = 0
    while i < len(graph.ops):
        op = graph.ops[i]
        if op.type not in ("MUL", "ADD") or len(op.inputs) != 2:
            i += 1
            continue
        const_side = [k for k in (0, 1) if tensors[op.inputs[k]].is_constant]
        producer = (
            graph.producers().get(op.inputs[1 - const_side[0]]) if len(const_side) == 1 else None
        )
        conv = graph.ops[producer] if producer is not None else None
        if conv is None or conv.type not in _CONVS:
            i += 1
            continue
        if sole_consumer(graph, conv.outputs[0]) != i:
            result.declined.append(f"#{i} {op.type}: conv output has other readers")
            i += 1
            continue
        if conv.attrs.get("fused_activation_function", "NONE") != "NONE" or conv.attrs.get(
            "epilogue"
        ):
            result.declined.append(f"#{i} {op.type}: conv already has an activation")
            i += 1
            continue
        channels = tensors[conv.outputs[0]].shape[-1]
        k = _per_channel(tensors[op.inputs[const_side[0]]].data, channels)
        if k is None or tensors[op.outputs[0]].shape != tensors[conv.outputs[0]].shape:
            result.declined.append(f"#{i} {op.type}: constant is not per channel")
            i += 1
            continue
        weights = tensors[conv.inputs[1]].data
        has_bias = len(conv.inputs) > 2 and conv.inputs[2] >= 0
        bias = tensors[conv.inputs[2]].data if has_bias else np.zeros(channels, np.float32)
        if op.type == "MUL":
            # conv weights are [O, kh, kw, I]; depthwise [1, kh, kw, C*M]: channel is axis 0 / -1
            scale = k.reshape(-1, 1, 1, 1) if conv.type == "CONV_2D" else k.reshape(1, 1, 1, -1)
            weights, bias = weights * scale, bias * k
        else:
            bias = bias + k
        base = tensors[conv.outputs[0]].name
        tensors.append(
            Tensor(f"{base}/folded_weights", weights.shape, "float32", weights.astype(np.float32))
        )
        tensors.append(
            Tensor(f"{base}/folded_bias", bias.shape, "float32", bias.astype(np.float32))
        )
        w_id, b_id = len(tensors) - 2, len(tensors) - 1
        folded = replace(conv, inputs=(conv.inputs[0], w_id, b_id), outputs=op.outputs)
        folded = with_attrs(
            folded, fused_activation_function=op.attrs.get("fused_activation_function", "NONE")
        )
        ops = [folded if n == producer else o for n, o in enumerate(graph.ops) if n != i]
        graph = Graph(tensors, ops, list(graph.inputs), list(graph.outputs), graph.name)
        result.applied += 1
    return graph, result
