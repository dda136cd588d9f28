"""Graph-pass test helpers: a graph builder with seeded conv weights, output equality."""

from __future__ import annotations

import numpy as np

from engine.model.builder import GraphBuilder
from engine.model.ir import Graph
from engine.reference import Interpreter

RNG = np.random.default_rng(7)
CONV = {"padding": "SAME", "stride_w": 1, "stride_h": 1, "dilation_w_factor": 1,
        "dilation_h_factor": 1, "fused_activation_function": "NONE"}  # fmt: skip


class Builder(GraphBuilder):
    """The graph builder for hand-made cases, with random conv weights (RNG)."""

    def __init__(self):
        super().__init__("hand-made")

    def conv(self, x, cin, cout, shape, k=3, **attrs):
        w = self.const(RNG.standard_normal((cout, k, k, cin)).astype(np.float32))
        b = self.const(RNG.standard_normal(cout).astype(np.float32))
        return self.op("CONV_2D", (x, w, b), shape, **{**CONV, **attrs})


def same_outputs(before: Graph, after: Graph, rtol=1e-4):
    feeds = {
        before.tensors[t].name: RNG.uniform(-1, 1, before.tensors[t].shape).astype(np.float32)
        for t in before.inputs
    }
    want = Interpreter(before, dtype=np.float64).run(feeds)
    got = Interpreter(after, dtype=np.float64).run(feeds)
    assert want.keys() == got.keys()
    for name in want:
        scale = max(1.0, float(np.abs(want[name]).max()))
        np.testing.assert_allclose(got[name], want[name], atol=rtol * scale, rtol=0)
