"""One-op models for kernel throughput: `engine-bench --op conv3x3 --shape 128x128x32`.

Each op keeps the spatial size (SAME padding, stride 1) and the channel count, with
random weights and bias, so FLOPs are easy to check by hand:
- conv3x3: CONV_2D 3x3, C -> C: 2*H*W*C*9*C
- conv1x1: CONV_2D 1x1, C -> C: 2*H*W*C*C
- depthwise3x3: DEPTHWISE_CONV_2D 3x3, multiplier 1: 2*H*W*C*9
The graph is written with engine.model.writer for LiteRT (same bytes for every peer).
"""

from __future__ import annotations

import numpy as np

from engine.model.builder import GraphBuilder
from engine.model.ir import Graph

OPS = {  # name -> (op type, kernel size)
    "conv3x3": ("CONV_2D", 3),
    "conv1x1": ("CONV_2D", 1),
    "depthwise3x3": ("DEPTHWISE_CONV_2D", 3),
}


def parse_shape(text: str) -> tuple[int, int, int]:
    """'128x128x32' -> (128, 128, 32); ValueError otherwise."""
    parts = text.lower().split("x")
    if len(parts) != 3 or not all(p.isdigit() and int(p) > 0 for p in parts):
        raise ValueError(f"shape {text!r}: expected HxWxC with positive integers, e.g. 128x128x32")
    h, w, c = (int(p) for p in parts)
    return h, w, c


def bench_graph(name: str, shape: tuple[int, int, int], seed: int = 0) -> Graph:
    """The one-op graph for `name` (a key of OPS) on a [1, H, W, C] input."""
    op_type, k = OPS[name]
    h, w, c = shape
    rng = np.random.default_rng(seed)
    wshape = (1, k, k, c) if op_type == "DEPTHWISE_CONV_2D" else (c, k, k, c)
    weights = (rng.standard_normal(wshape) / np.sqrt(k * k * c)).astype(np.float32)
    bias = rng.standard_normal(c).astype(np.float32) * 0.1
    b = GraphBuilder(f"{name}@{h}x{w}x{c}")
    x = b.tensor((1, h, w, c), name="input")
    attrs = {
        "padding": "SAME",
        "stride_w": 1,
        "stride_h": 1,
        "dilation_w_factor": 1,
        "dilation_h_factor": 1,
        "fused_activation_function": "NONE",
    }
    if op_type == "DEPTHWISE_CONV_2D":
        attrs["depth_multiplier"] = 1
    inputs = (x, b.const(weights, "weights"), b.const(bias, "bias"))
    return b.graph([x], [b.op(op_type, inputs, name="output", **attrs)])
