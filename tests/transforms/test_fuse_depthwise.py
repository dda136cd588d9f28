"""fuse_depthwise_conv1x1: applied and declined cases; the fused graph gives the
reference interpreter's original outputs, and LiteRT's (the oracle for the original)."""

from __future__ import annotations

import numpy as np
import pytest

from engine.model.cost import op_flops
from engine.reference import Interpreter
from engine.transforms import PASSES, run_all
from engine.transforms.fuse_depthwise import FUSED, fuse_depthwise_conv1x1
from tests.helpers.single_op import max_error, run_litert
from tests.helpers.transforms import CONV, RNG, Builder, same_outputs


def block(c=8, cout=12, dw_readers=1, multiplier=1, dilation=1, gate=False, act="RELU6",
          pad=False):  # fmt: skip
    """x -> DEPTHWISE 3x3 (act) -> CONV_2D 1x1 -> ADD(+ r) (RELU); `dw_readers` 2: the
    depthwise result is also a graph output; `gate`: squeeze-excite before the 1x1 (the
    depthwise result times its own channel means); `pad`: a zero PAD before a VALID
    depthwise instead of SAME (merge_pad makes it the depthwise's explicit padding)."""
    b = Builder()
    x = b.tensor((1, 7, 6, c), name="x")
    m = c * multiplier
    dw_in, padding = x, "SAME"
    if pad:
        amounts = b.const(np.array([[0, 0], [1, 1], [1, 1], [0, 0]], np.int32))
        dw_in, padding = b.op("PAD", (x, amounts), (1, 9, 8, c)), "VALID"
    dw = b.op("DEPTHWISE_CONV_2D", (dw_in, b.const(RNG.standard_normal((1, 3, 3, m)).astype(np.float32)),
              b.const(RNG.standard_normal(m).astype(np.float32))), (1, 7, 6, m),
              **{**CONV, "padding": padding, "fused_activation_function": act,
                 "depth_multiplier": multiplier,
                 "dilation_h_factor": dilation, "dilation_w_factor": dilation})  # fmt: skip
    mid = dw
    if gate:
        axes = b.const(np.array([1, 2], np.int32))
        g = b.op("MEAN", (dw, axes), (1, 1, 1, m), keep_dims=True)
        mid = b.op("MUL", (dw, g), (1, 7, 6, m), fused_activation_function="NONE")
    y = b.conv(mid, m, cout, (1, 7, 6, cout), k=1, padding="VALID")
    residual = b.tensor((1, 7, 6, cout), name="r")
    out = b.op("ADD", (y, residual), (1, 7, 6, cout), fused_activation_function="RELU")
    return b.graph([x, residual], [out, dw] if dw_readers == 2 else [out])


@pytest.mark.parametrize("pad", [False, True], ids=["same", "merged-pad"])
def test_pair_fuses_into_one_op_with_both_epilogues(pad):
    graph = block(pad=pad)
    before = run_all(graph, PASSES)  # the 1x1 conv took the residual add and RELU
    after, result = fuse_depthwise_conv1x1(before)
    assert result.applied == 1
    assert [op.type for op in after.ops] == [FUSED]
    (op,) = after.ops
    assert op.attrs["depthwise"]["fused_activation_function"] == "RELU6"
    assert ("explicit_padding" in op.attrs["depthwise"]) == pad
    assert [s[0] for s in op.attrs["epilogue"]] == ["add", "act"]
    assert op_flops(after, op) == sum(op_flops(before, o) for o in before.ops)
    same_outputs(graph, after)
    feeds = {graph.tensors[t].name: RNG.uniform(-1, 1, graph.tensors[t].shape).astype(np.float32)
             for t in graph.inputs}  # fmt: skip
    want = run_litert(graph, feeds)
    got = Interpreter(after).run(feeds)
    name = graph.tensors[graph.outputs[0]].name
    assert max_error(want[name], got[name]) <= 1e-5


@pytest.mark.parametrize(
    "kwargs, reason",
    [
        (dict(dw_readers=2), None),  # its result is read twice: not a candidate
        (dict(multiplier=2, cout=12), "multiplier"),
        (dict(dilation=2), "dilated"),
        (dict(gate=True), None),  # the gate's mean reads it too
    ],
    ids=["depthwise-is-an-output", "multiplier", "dilation", "squeeze-excite-gate"],
)
def test_declined(kwargs, reason):
    graph = block(**kwargs)
    before = run_all(graph, PASSES)
    after, result = fuse_depthwise_conv1x1(before)
    assert result.applied == 0 and FUSED not in [op.type for op in after.ops]
    if reason:
        assert reason in result.declined[0], result.declined
    else:
        assert not result.declined
