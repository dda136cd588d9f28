"""Fuse a depthwise conv and the 1x1 conv that reads it into one op (one dispatch).

The inverted-residual and BlazeBlock pattern: DEPTHWISE_CONV_2D -> CONV_2D 1x1. The
depthwise result is read by nothing but the 1x1 conv, so it need not exist as a tensor:
op "DEPTHWISE_CONV_1X1" computes it for a tile of pixels in work group memory and
multiplies it by the 1x1 weights there (engine/gpu/kernels/depthwise_conv1x1.py), as
TFLite's GPU delegate does with DepthwiseConvPlus1x1Conv. One dispatch, one
intermediate tensor and its write and read go per pair.

The fused op: inputs (x, depthwise weights, depthwise bias, 1x1 weights, 1x1 bias),
bias -1 when absent; attrs["depthwise"] = the depthwise op's attrs (its padding, strides,
activation and activation-only epilogue); the other attrs are the 1x1 conv's (its
activation and epilogue: residual adds, PReLU...). The reference interpreter runs it as
the two ops (engine/reference/fused.py).

Declined: a depthwise with a multiplier, dilation or an epilogue step other than an
activation (a tensor operand or a fake quantization), a 1x1 conv with a padding, a
stride or a fused input scale, more than MAX_CHANNELS channels (the tile of one pixel
must fit work group memory). engine/gpu/compile.py runs this pass (transforms.
KERNEL_PASSES) for the optimized kernel set on the adapter classes that fuse
(engine/gpu/kernels/tile_tables.py FUSED_TILES: empty, the pair ran as fast or faster on lavapipe,
SwiftShader and an H100).
"""

from __future__ import annotations

from engine.model.ir import Graph, Op
from engine.transforms.base import PassResult, mappable, sole_consumer

FUSED = "DEPTHWISE_CONV_1X1"
# One pixel's depthwise result, every channel, must fit WebGPU's minimum work group
# memory (16 KiB = 1024 vec4 of f32).
MAX_CHANNELS = 4096


def _bias(op: Op) -> int:
    return op.inputs[2] if len(op.inputs) > 2 else -1


def _constant(graph: Graph, *tensors: int) -> bool:
    """Every tensor (ids < 0: absent) is a constant."""
    return all(t < 0 or graph.tensors[t].is_constant for t in tensors)


def _depthwise_ok(graph: Graph, op: Op) -> str | None:
    """Why depthwise op `op` cannot be fused, or None."""
    w = graph.tensors[op.inputs[1]]
    a = op.attrs
    if not _constant(graph, op.inputs[1], _bias(op)):
        return "depthwise weights are not constant"
    if w.shape[3] != graph.tensors[op.inputs[0]].shape[-1]:
        return "depthwise multiplier > 1"
    if a.get("dilation_h_factor", 1) != 1 or a.get("dilation_w_factor", 1) != 1:
        return "dilated depthwise"
    if any(kind != "act" for kind, _ in a.get("epilogue", ())):
        return "depthwise epilogue reads a tensor or quantizes"
    if w.shape[3] > MAX_CHANNELS:
        return f"more than {MAX_CHANNELS} channels"
    return None


def _conv1x1_ok(graph: Graph, op: Op) -> str | None:
    """Why CONV_2D `op` cannot take a depthwise before it, or None."""
    w = graph.tensors[op.inputs[1]]
    a = op.attrs
    if not _constant(graph, op.inputs[1], _bias(op)) or w.shape[1:3] != (1, 1):
        return "not a constant 1x1 conv"
    if a["stride_h"] != 1 or a["stride_w"] != 1 or any(a.get("explicit_padding", (0, 0, 0, 0))):
        return "1x1 conv with a stride or padding"
    if "input_scale" in a:
        return "1x1 conv with an input scale"
    if graph.tensors[op.inputs[0]].shape[-1] != w.shape[3]:
        return "grouped 1x1 conv"
    return None


def fuse_depthwise_conv1x1(graph: Graph) -> tuple[Graph, PassResult]:
    result = PassResult("fuse_depthwise_conv1x1")
    producers = graph.producers()
    drop: set[int] = set()
    fused: dict[int, Op] = {}
    for i, conv in enumerate(graph.ops):
        if conv.type != "CONV_2D" or not mappable(graph, *conv.inputs, *conv.outputs):
            continue
        d = producers.get(conv.inputs[0])
        if d is None or graph.ops[d].type != "DEPTHWISE_CONV_2D" or d in drop:
            continue
        dw = graph.ops[d]
        if sole_consumer(graph, dw.outputs[0]) != i or not mappable(graph, *dw.inputs):
            continue
        why = _depthwise_ok(graph, dw) or _conv1x1_ok(graph, conv)
        if why:
            result.declined.append(f"#{d} + #{i}: {why}")
            continue
        inputs = (dw.inputs[0], dw.inputs[1], _bias(dw), conv.inputs[1], _bias(conv))
        fused[i] = Op(FUSED, inputs, conv.outputs, {**conv.attrs, "depthwise": dict(dw.attrs)})
        drop.add(d)
        result.applied += 1
    if not fused:
        return graph, result
    # The fused op takes the 1x1 conv's place: its input x was computed before the
    # depthwise, and the conv's epilogue operands before the conv.
    ops = [fused.get(i, op) for i, op in enumerate(graph.ops) if i not in drop]
    return Graph(graph.tensors, ops, list(graph.inputs), list(graph.outputs), graph.name), result


def depthwise_part(op: Op) -> Op:
    """The depthwise half of a fused op as a DEPTHWISE_CONV_2D. Its output is the fused
    op's, whose channels differ: epilogue steps built from it must not depend on the
    channel count (depthwise_conv1x1.py drops the one that does, the sigmoid mask)."""
    return Op("DEPTHWISE_CONV_2D", op.inputs[:3], op.outputs, dict(op.attrs["depthwise"]))


def conv1x1_part(op: Op, src: int) -> Op:
    """The 1x1 half of a fused op as a CONV_2D reading tensor `src`."""
    attrs = {k: v for k, v in op.attrs.items() if k != "depthwise"}
    return Op("CONV_2D", (src, op.inputs[3], op.inputs[4]), op.outputs, attrs)
