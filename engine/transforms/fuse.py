"""Fuse element-wise work into the epilogue of the op that produces its input.

- fuse_activations: the element-wise table's fusable activations (RELU, RELU6,
  RELU_N1_TO_1, LOGISTIC, TANH, HARD_SWISH) and PRELU (constant slopes) after a
  producer -> the producer's epilogue;
- fuse_elementwise: ADD / MUL of two tensors where one comes from a producer
  whose only reader is this op (e.g. a residual add after a conv) -> the
  producer's epilogue adds / multiplies the other tensor, then applies the
  ADD's own fused activation. When the other tensor is a 2x2 stride-2 MAX_POOL_2D
  (through an optional channel PAD) read by nothing else, as in the downsampling
  blocks of BlazeFace and face_landmark, the pool goes too: the epilogue step
  ("add_pool2", POOL_INPUT) takes the max of the 2x2 window itself (one dispatch and
  one intermediate fewer per block).
The producer must write no graph output in between, and its result must have
exactly one reader. Epilogue steps live in op.attrs["epilogue"] (see
engine/gpu/kernels/epilogue.py); the reference interpreter applies them too.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from engine.model.elementwise import UNARY, fused_steps
from engine.model.ir import Graph
from engine.model.layout import phwc4_shape
from engine.model.op_specs import SPECS
from engine.transforms.base import PassResult, mappable, sole_consumer, with_attrs

# Producers the passes fuse into (engine/model/op_specs.py: epilogue "all").
PRODUCERS = {name for name, spec in SPECS.items() if spec.epilogue == "all"}
ACTIVATIONS = {name for name, u in UNARY.items() if u.fusable}


def _fuse_into(graph: Graph, producer: int, consumer: int, steps: tuple) -> Graph:
    """Producer takes the consumer's output and appends `steps`; the consumer goes."""
    p, c = graph.ops[producer], graph.ops[consumer]
    fused = with_attrs(p, epilogue=tuple(p.attrs.get("epilogue", ())) + steps)
    fused = replace(fused, outputs=c.outputs)
    ops = [fused if i == producer else op for i, op in enumerate(graph.ops) if i != consumer]
    return graph.__class__(graph.tensors, ops, list(graph.inputs), list(graph.outputs), graph.name)


def _producer_of(graph: Graph, tensor: int) -> int | None:
    index = graph.producers().get(tensor)
    if index is None or graph.ops[index].type not in PRODUCERS:
        return None
    if len(graph.ops[index].outputs) != 1:
        return None
    return index


def fuse_activations(graph: Graph) -> tuple[Graph, PassResult]:
    result = PassResult("fuse_activations")
    i = 0
    while i < len(graph.ops):
        op = graph.ops[i]
        step = None
        if op.type in ACTIVATIONS:
            step = ("act", op.type)
        elif op.type == "PRELU" and not mappable(graph, *op.inputs, *op.outputs):
            pass  # rank > 4: nothing to fuse into on the GPU
        elif op.type == "PRELU" and graph.tensors[op.inputs[1]].is_constant:
            alpha = graph.tensors[op.inputs[1]]
            channels = phwc4_shape(graph.tensors[op.outputs[0]].shape)[3]
            if alpha.size == channels:
                step = ("prelu", op.inputs[1])
            else:
                result.declined.append(f"#{i} PRELU slopes are not per channel")
        producer = _producer_of(graph, op.inputs[0]) if step else None
        if step and producer is not None and sole_consumer(graph, op.inputs[0]) == i:
            # the activation's own epilogue (e.g. its rounding in a quantized model) follows
            graph = _fuse_into(graph, producer, i, (step, *op.attrs.get("epilogue", ())))
            result.applied += 1
            continue
        i += 1
    return graph, result


def _channel_pad_source(graph: Graph, tensor: int, reader: int) -> int | None:
    """If `tensor` is a zero PAD of the last dim only (at the end), read only by op
    `reader`, return the PAD's input: an add can read it directly, zero beyond it."""
    index = graph.producers().get(tensor)
    if index is None or graph.ops[index].type != "PAD" or sole_consumer(graph, tensor) != reader:
        return None
    pad = graph.ops[index]
    amounts = graph.tensors[pad.inputs[1]]
    if not amounts.is_constant:
        return None
    pads = np.asarray(amounts.data).reshape(-1, 2)
    if pads[:-1].any() or pads[-1, 0] != 0:
        return None
    return pad.inputs[0]


def _pool2_source(graph: Graph, tensor: int, reader: int) -> tuple[int, int] | None:
    """If `tensor` is a 2x2 stride-2 max pool without padding or activation, read only by
    op `reader`, (the pool's op index, its input): an add can pool that input itself."""
    index = graph.producers().get(tensor)
    if index is None or sole_consumer(graph, tensor) != reader:
        return None
    pool = graph.ops[index]
    a = pool.attrs
    if pool.type != "MAX_POOL_2D" or a.get("epilogue") or not mappable(graph, pool.inputs[0]):
        return None
    window = (a["filter_height"], a["filter_width"], a["stride_h"], a["stride_w"])
    if window != (2, 2, 2, 2) or a.get("fused_activation_function", "NONE") != "NONE":
        return None
    b, h, w, _ = phwc4_shape(graph.tensors[pool.inputs[0]].shape)
    ob, oh, ow, _ = phwc4_shape(graph.tensors[tensor].shape)
    if b != 1 or ob != 1 or (h, w) != (2 * oh, 2 * ow):  # even: SAME pads nothing either
        return None
    return index, pool.inputs[0]


def _fuse_pair(graph: Graph, i: int, result: PassResult) -> Graph | None:
    """Fuse ADD/MUL op `i` into the producer of one operand, or None."""
    op = graph.ops[i]
    if not mappable(graph, *op.inputs, *op.outputs):
        return None
    out_shape = phwc4_shape(graph.tensors[op.outputs[0]].shape)
    for side in (0, 1):
        mine, other = op.inputs[side], op.inputs[1 - side]
        producer = _producer_of(graph, mine)
        if producer is None or sole_consumer(graph, mine) != i:
            continue
        if phwc4_shape(graph.tensors[mine].shape) != out_shape:
            continue  # the producer's output must be the full-size operand
        dropped = None
        if op.type == "ADD":
            source = _channel_pad_source(graph, other, i)
            if source is not None:
                dropped, other = graph.producers()[other], source
        other_shape = phwc4_shape(graph.tensors[other].shape)
        per_channel = other_shape[:3] == (1, 1, 1) and other_shape[3] == out_shape[3]
        fewer_channels = other_shape[:3] == out_shape[:3] and other_shape[3] < out_shape[3]
        if (
            other_shape != out_shape
            and not per_channel
            and not (dropped is not None and fewer_channels)
        ):
            continue
        if graph.tensors[other].is_constant and not per_channel:
            continue
        step, pool = (op.type.lower(), other), None
        if op.type == "ADD":
            pooled = _pool2_source(graph, other, dropped if dropped is not None else i)
            if pooled is not None:
                pool, step = pooled[0], ("add_pool2", pooled[1])
        act = op.attrs.get("fused_activation_function", "NONE")
        # the ADD's own activation (TFLite: a fused TANH is a no-op), then what was fused
        # into this op
        steps = (step, *fused_steps(act), *op.attrs.get("epilogue", ()))
        # Run the producer right before op i: its only reader is op i, so moving it
        # later is safe, and then `other` (and the PAD's or the pool's input) is already
        # computed. A folded PAD and pool go.
        rest = [k for k in range(len(graph.ops)) if k not in (producer, i, dropped, pool)]
        p = sum(1 for k in rest if k < i)
        order = rest[:p] + [producer, i] + rest[p:]
        moved = Graph(graph.tensors, [graph.ops[k] for k in order], list(graph.inputs),
                      list(graph.outputs), graph.name)  # fmt: skip
        result.applied += 1
        return _fuse_into(moved, p, p + 1, steps)
    return None


def fuse_elementwise(graph: Graph) -> tuple[Graph, PassResult]:
    result = PassResult("fuse_elementwise")
    i = 0
    while i < len(graph.ops):
        op = graph.ops[i]
        fused = None
        if op.type in ("ADD", "MUL") and len(op.inputs) == 2:
            fused = _fuse_pair(graph, i, result)
        if fused is None:
            i += 1
        else:
            graph = fused
    return graph, result


def fuse_input_scale(graph: Graph) -> tuple[Graph, PassResult]:
    """MUL(x, gate) read only by a 1x1 conv -> the conv scales its input per channel.

    The squeeze-excite pattern: x has other readers (the pooling that makes the gate),
    so the MUL cannot go into x's producer; it goes into its consumer instead. The
    gate is one value per channel ([1,1,1,C]); the conv gets attrs["input_scale"].
    """
    result = PassResult("fuse_input_scale")
    i = 0
    while i < len(graph.ops):
        op = graph.ops[i]
        target = _input_scale_target(graph, i) if op.type == "MUL" else None
        if target is None:
            i += 1
            continue
        reader, x, gate = target
        conv = graph.ops[reader]
        fused = replace(with_attrs(conv, input_scale=gate), inputs=(x,) + conv.inputs[1:])
        ops = [fused if k == reader else o for k, o in enumerate(graph.ops) if k != i]
        graph = Graph(graph.tensors, ops, list(graph.inputs), list(graph.outputs), graph.name)
        result.applied += 1
    return graph, result


def _input_scale_target(graph: Graph, i: int) -> tuple[int, int, int] | None:
    """(reader op, full-size operand, per-channel gate) when MUL #i can be fused."""
    op = graph.ops[i]
    if len(op.inputs) != 2 or op.attrs.get("fused_activation_function", "NONE") != "NONE":
        return None
    if op.attrs.get("epilogue"):
        return None
    reader = sole_consumer(graph, op.outputs[0])
    if reader is None:
        return None
    conv = graph.ops[reader]
    if conv.type != "CONV_2D" or conv.inputs[0] != op.outputs[0] or "input_scale" in conv.attrs:
        return None
    w = graph.tensors[conv.inputs[1]]
    pads = conv.attrs.get("explicit_padding", (0, 0, 0, 0))
    if w.shape[1:3] != (1, 1) or conv.attrs["stride_h"] != 1 or conv.attrs["stride_w"] != 1:
        return None
    if any(pads) or not mappable(graph, *op.inputs, *op.outputs):
        return None
    out = phwc4_shape(graph.tensors[op.outputs[0]].shape)
    for x, gate in (op.inputs, op.inputs[::-1]):
        g = phwc4_shape(graph.tensors[gate].shape)
        if phwc4_shape(graph.tensors[x].shape) == out and g == (1, 1, 1, out[3]):
            return reader, x, gate
    return None
