"""Merge a zero PAD of the spatial dims into the conv / depthwise / pool reading it.

The reader gets attrs["explicit_padding"] = (top, bottom, left, right): the
PAD's amounts plus the reader's own SAME padding. Padded taps are zeros that
count (as after a real PAD), so pools accept only VALID padding here: their
SAME padding ignores out-of-bounds taps, which cannot be mixed with zeros that
count. Declined: channel/batch padding, non-zero pad value, several readers.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from engine.model.ir import Graph
from engine.reference.padding import out_size
from engine.transforms.base import PassResult, sole_consumer, with_attrs

_CONVS = {"CONV_2D", "DEPTHWISE_CONV_2D"}
_POOLS = {"MAX_POOL_2D", "AVERAGE_POOL_2D"}


def _own_padding(op, graph: Graph, h: int, w: int) -> tuple[int, int, int, int]:
    """The reader's SAME/VALID padding on an input of h x w, as (top, bottom, left, right)."""
    if op.type in _CONVS:
        _, kh, kw, _ = graph.tensors[op.inputs[1]].shape
    else:
        kh, kw = op.attrs["filter_height"], op.attrs["filter_width"]
    a = op.attrs
    pads = []
    for size, k, stride, dil in (
        (h, kh, a["stride_h"], a.get("dilation_h_factor", 1)),
        (w, kw, a["stride_w"], a.get("dilation_w_factor", 1)),
    ):
        out = out_size(a["padding"], size, k, stride, dil)
        total = max(0, (out - 1) * stride + (k - 1) * dil + 1 - size)
        pads += [total // 2, total - total // 2]
    return tuple(pads)


def merge_pad(graph: Graph) -> tuple[Graph, PassResult]:
    result = PassResult("merge_pad")
    i = 0
    while i < len(graph.ops):
        op = graph.ops[i]
        if op.type not in ("PAD", "PADV2"):
            i += 1
            continue
        why = _why_not(graph, i)
        if why:
            result.declined.append(f"#{i} {why}")
            i += 1
            continue
        reader_index = sole_consumer(graph, op.outputs[0])
        reader = graph.ops[reader_index]
        pads = np.asarray(graph.tensors[op.inputs[1]].data).reshape(-1, 2)
        padded = graph.tensors[op.outputs[0]].shape
        own = _own_padding(reader, graph, padded[1], padded[2])
        explicit = (
            int(pads[1, 0]) + own[0], int(pads[1, 1]) + own[1],
            int(pads[2, 0]) + own[2], int(pads[2, 1]) + own[3],
        )  # fmt: skip
        inputs = (op.inputs[0],) + reader.inputs[1:]
        merged = replace(with_attrs(reader, explicit_padding=explicit), inputs=inputs)
        ops = [merged if k == reader_index else o for k, o in enumerate(graph.ops) if k != i]
        graph = Graph(graph.tensors, ops, list(graph.inputs), list(graph.outputs), graph.name)
        result.applied += 1
    return graph, result


def _why_not(graph: Graph, i: int) -> str:
    op = graph.ops[i]
    paddings = graph.tensors[op.inputs[1]]
    if not paddings.is_constant:
        return "PAD amounts are not constant"
    pads = np.asarray(paddings.data).reshape(-1, 2)
    if len(pads) != 4 or pads[0].any() or pads[3].any():
        return "PAD is not purely spatial on a 4-D tensor"
    if op.type == "PADV2" and len(op.inputs) > 2 and op.inputs[2] >= 0:
        value = graph.tensors[op.inputs[2]]
        if not value.is_constant or np.any(value.data != 0):
            return "PADV2 with a non-zero value"
    reader_index = sole_consumer(graph, op.outputs[0])
    if reader_index is None:
        return "PAD output has several readers or is a graph output"
    reader = graph.ops[reader_index]
    if reader.type not in _CONVS | _POOLS or reader.inputs[0] != op.outputs[0]:
        return f"PAD feeds {reader.type}"
    if "explicit_padding" in reader.attrs:
        return "reader already has explicit padding"
    if reader.type in _POOLS and reader.attrs["padding"] != "VALID":
        return "pool with SAME padding ignores padded taps"
    return ""
