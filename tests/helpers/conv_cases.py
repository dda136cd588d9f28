"""Convolution cases and graph makers shared by the GPU tests of each kernel set
(tests/gpu/test_conv.py, test_depthwise.py, test_transpose_conv.py, test_compact_kernels.py)."""

from __future__ import annotations

import numpy as np

from tests.helpers.gpu import conv_attrs
from tests.helpers.single_op import single_op_graph

CONV_CASES = [
    # (h, w, cin, cout, k, stride, dilation, padding, activation)
    (9, 11, 5, 7, 3, 1, 1, "SAME", "RELU"),
    (16, 16, 8, 13, 1, 1, 1, "VALID", "NONE"),
    (17, 13, 3, 24, 5, 2, 1, "SAME", "RELU6"),
    (12, 10, 4, 4, 3, 2, 1, "VALID", "TANH"),
    (11, 9, 6, 3, 3, 1, 2, "SAME", "RELU_N1_TO_1"),
    (8, 8, 1, 1, 2, 1, 1, "VALID", "NONE"),
    (6, 7, 13, 9, 3, 1, 1, "SAME", "NONE"),
]

DEPTHWISE_CASES = [
    # (b, h, w, c, mult, k, stride, dilation, padding, activation)
    (1, 9, 11, 5, 1, 3, 1, 1, "SAME", "RELU"),
    (1, 10, 9, 8, 1, 3, 2, 1, "SAME", "RELU6"),
    (1, 9, 10, 7, 1, 3, 2, 1, "VALID", "NONE"),
    (2, 7, 6, 4, 1, 3, 1, 1, "VALID", "RELU_N1_TO_1"),
    (1, 13, 12, 13, 1, 5, 1, 1, "SAME", "NONE"),
    (1, 12, 13, 3, 1, 5, 2, 1, "SAME", "RELU"),
    (1, 11, 9, 6, 1, 5, 2, 1, "VALID", "NONE"),
    (1, 3, 2, 1, 1, 3, 1, 1, "SAME", "NONE"),  # output smaller than a tile
    (1, 8, 8, 4, 1, 2, 1, 1, "VALID", "NONE"),  # 2x2: tiled, not a 3x3/5x5
    (1, 11, 9, 6, 1, 3, 1, 2, "SAME", "RELU6"),  # dilation: generic
    (1, 12, 12, 5, 1, 7, 3, 1, "SAME", "NONE"),  # 7x7 stride 3: generic
    (1, 9, 10, 3, 2, 3, 1, 1, "SAME", "NONE"),  # multiplier 2
    (2, 9, 8, 5, 3, 3, 2, 1, "VALID", "RELU"),  # multiplier 3, channels cross slices
    (1, 6, 7, 1, 4, 3, 1, 2, "SAME", "TANH"),
]

TCONV_GRID = [
    # (padding, (stride h, w), (kernel h, w))
    ("SAME", (1, 1), (3, 3)),
    ("VALID", (1, 1), (2, 2)),
    ("SAME", (2, 2), (2, 2)),
    ("SAME", (2, 2), (3, 3)),
    ("VALID", (2, 2), (4, 3)),
    ("SAME", (3, 2), (4, 3)),
    ("VALID", (3, 2), (2, 2)),
    ("VALID", (2, 3), (3, 3)),
]


def rand(rng, *shape) -> np.ndarray:
    """Standard normal float32 values of `shape`."""
    return rng.standard_normal(shape).astype(np.float32)


def depthwise_graph(b, h, w, c, mult, k, stride, dil, padding, act, rng, bias=True, extra=None):
    """A DEPTHWISE_CONV_2D graph of one DEPTHWISE_CASES row (random weights from `rng`)."""
    weights = rng.standard_normal((1, k, k, c * mult)).astype(np.float32)
    b_ = rng.standard_normal(c * mult).astype(np.float32) if bias else None
    attrs = conv_attrs(padding, stride, dil, act, depth_multiplier=mult, **(extra or {}))
    return single_op_graph("DEPTHWISE_CONV_2D", [(b, h, w, c), weights, b_], attrs)


def _tconv_out(padding, size, k, s):
    return size * s if padding == "SAME" else (size - 1) * s + k


def tconv_graph(padding, stride, k, rng, cin=3, cout=6, hw=(4, 5), b=1, bias=True, act=None):
    """A TRANSPOSE_CONV graph of one TCONV_GRID row (random weights from `rng`)."""
    shape = np.array(
        [b, _tconv_out(padding, hw[0], k[0], stride[0]), _tconv_out(padding, hw[1], k[1], stride[1]), cout],
        np.int32,
    )  # fmt: skip
    attrs = {"padding": padding, "stride_h": stride[0], "stride_w": stride[1]}
    if act:
        attrs["fused_activation_function"] = act
    inputs = [shape, rand(rng, cout, *k, cin), (b, *hw, cin), rand(rng, cout) if bias else None]
    return single_op_graph("TRANSPOSE_CONV", inputs, attrs)
