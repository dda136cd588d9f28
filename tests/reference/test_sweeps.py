"""Random parameter sweeps vs LiteRT (seeded, so failures reproduce by test id).

Odd corners the hand-written grids may miss: kernels larger than the input under SAME,
stride larger than the kernel, dilation with VALID, 1-pixel images, one channel.
"""

from __future__ import annotations

import numpy as np
import pytest

from engine.reference.padding import out_size
from tests.helpers.single_op import compare_with_litert, random_feeds, single_op_graph

pytest.importorskip("ai_edge_litert")

SEEDS = range(25)
ACTS = ["NONE", "RELU", "RELU6", "RELU_N1_TO_1"]


def _window(rng, dilated=True):
    """Random (input hw, kernel hw, stride, dilation, padding) with a non-empty output."""
    while True:
        hw = tuple(int(v) for v in rng.integers(1, 11, 2))
        k = tuple(int(v) for v in rng.integers(1, 6, 2))
        s = tuple(int(v) for v in rng.integers(1, 4, 2))
        d = tuple(int(v) for v in rng.integers(1, 4, 2)) if dilated else (1, 1)
        pad = str(rng.choice(["SAME", "VALID"]))
        if all(out_size(pad, hw[i], k[i], s[i], d[i]) > 0 for i in range(2)):
            return hw, k, s, d, pad


def _conv_attrs(rng, s, d, pad):
    return {
        "padding": pad,
        "stride_h": s[0],
        "stride_w": s[1],
        "dilation_h_factor": d[0],
        "dilation_w_factor": d[1],
        "fused_activation_function": str(rng.choice(ACTS)),
    }


def _rand(rng, *shape):
    return rng.uniform(-1, 1, shape).astype(np.float32)


@pytest.mark.parametrize("seed", SEEDS)
def test_conv_sweep(seed):
    rng = np.random.default_rng(seed)
    hw, k, s, d, pad = _window(rng)
    n, c, o = int(rng.integers(1, 3)), int(rng.integers(1, 10)), int(rng.integers(1, 10))
    inputs = [(n, *hw, c), _rand(rng, o, *k, c), _rand(rng, o)]
    g = single_op_graph("CONV_2D", inputs, _conv_attrs(rng, s, d, pad))
    compare_with_litert(g, random_feeds(g, rng, scale=2.0))


@pytest.mark.parametrize("seed", SEEDS)
def test_depthwise_sweep(seed):
    rng = np.random.default_rng(100 + seed)
    hw, k, s, d, pad = _window(rng)
    c, m = int(rng.integers(1, 10)), int(rng.integers(1, 4))
    attrs = _conv_attrs(rng, s, d, pad) | {"depth_multiplier": m}
    inputs = [(1, *hw, c), _rand(rng, 1, *k, c * m), _rand(rng, c * m)]
    g = single_op_graph("DEPTHWISE_CONV_2D", inputs, attrs)
    compare_with_litert(g, random_feeds(g, rng, scale=2.0))


@pytest.mark.parametrize("seed", SEEDS)
def test_pool_sweep(seed):
    rng = np.random.default_rng(200 + seed)
    hw, k, s, _, pad = _window(rng, dilated=False)
    op_type = str(rng.choice(["MAX_POOL_2D", "AVERAGE_POOL_2D"]))
    attrs = {
        "padding": pad,
        "stride_h": s[0],
        "stride_w": s[1],
        "filter_height": k[0],
        "filter_width": k[1],
        "fused_activation_function": str(rng.choice(ACTS)),
    }
    g = single_op_graph(op_type, [(int(rng.integers(1, 3)), *hw, int(rng.integers(1, 8)))], attrs)
    compare_with_litert(g, random_feeds(g, rng, scale=2.0))


@pytest.mark.parametrize("seed", SEEDS)
def test_transpose_conv_sweep(seed):
    rng = np.random.default_rng(300 + seed)
    hw = tuple(int(v) for v in rng.integers(1, 7, 2))
    k = tuple(int(v) for v in rng.integers(1, 5, 2))
    s = tuple(int(v) for v in rng.integers(1, 4, 2))
    pad = str(rng.choice(["SAME", "VALID"]))
    out = [hw[i] * s[i] if pad == "SAME" else (hw[i] - 1) * s[i] + k[i] for i in range(2)]
    ci, co = int(rng.integers(1, 6)), int(rng.integers(1, 6))
    attrs = {"padding": pad, "stride_h": s[0], "stride_w": s[1]}
    shape = np.array([1, *out, co], np.int32)
    g = single_op_graph(
        "TRANSPOSE_CONV", [shape, _rand(rng, co, *k, ci), (1, *hw, ci), _rand(rng, co)], attrs
    )
    compare_with_litert(g, random_feeds(g, rng))


@pytest.mark.parametrize("seed", SEEDS)
def test_resize_sweep(seed):
    rng = np.random.default_rng(400 + seed)
    op_type = str(rng.choice(["RESIZE_BILINEAR", "RESIZE_NEAREST_NEIGHBOR"]))
    align, half = [(False, False), (True, False), (False, True)][int(rng.integers(3))]
    in_hw = tuple(int(v) for v in rng.integers(1, 12, 2))
    size = np.array(rng.integers(1, 25, 2), np.int32)
    attrs = {"align_corners": align, "half_pixel_centers": half}
    g = single_op_graph(op_type, [(1, *in_hw, int(rng.integers(1, 5))), size], attrs)
    compare_with_litert(g, random_feeds(g, rng), tol=0.0 if "NEAREST" in op_type else 1e-5)


@pytest.mark.parametrize("seed", range(60))
def test_strided_slice_sweep(seed):
    rng = np.random.default_rng(500 + seed)
    rank = int(rng.integers(1, 5))
    shape = tuple(int(v) for v in rng.integers(1, 7, rank))
    strides = [int(v) for v in rng.choice([-3, -2, -1, 1, 2, 3], rank)]
    begin = [int(v) for v in rng.integers(-8, 9, rank)]
    end = [int(v) for v in rng.integers(-8, 9, rank)]
    shrink = 0
    for i in range(rank):  # shrink only where begin is a valid index
        if rng.random() < 0.25 and -shape[i] <= begin[i] < shape[i]:
            shrink |= 1 << i
            strides[i] = 1
    attrs = {
        "begin_mask": int(rng.integers(0, 2**rank)) & ~shrink,
        "end_mask": int(rng.integers(0, 2**rank)),
        "shrink_axis_mask": shrink,
    }
    const = [np.array(v, np.int32) for v in (begin, end, strides)]
    g = single_op_graph("STRIDED_SLICE", [shape, *const], attrs)
    compare_with_litert(g, random_feeds(g, rng), tol=0.0)
