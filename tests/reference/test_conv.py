"""Convolutions vs LiteRT; MediaPipe's Convolution2DTransposeBias vs a float64 loop."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from engine.model.elementwise import FUSED
from engine.reference import Interpreter
from tests.helpers.seeds import rng_for
from tests.helpers.single_op import (
    assert_close,
    compare_with_litert,
    max_error,
    random_feeds,
    run_litert,
    single_op_graph,
)

pytest.importorskip("ai_edge_litert")

ACTIVATIONS = list(FUSED)  # every fused_activation_function value


def _rand(rng, *shape):
    return rng.uniform(-1, 1, shape).astype(np.float32)


def _conv_attrs(padding, stride, dilation=(1, 1), act="NONE"):
    return {
        "padding": padding,
        "stride_h": stride[0],
        "stride_w": stride[1],
        "dilation_h_factor": dilation[0],
        "dilation_w_factor": dilation[1],
        "fused_activation_function": act,
    }


CONV_GRID = list(
    itertools.product(
        ["SAME", "VALID"], [(1, 1), (2, 2), (1, 2)], [(1, 1), (2, 2)], [(1, 1), (3, 3), (2, 3)]
    )
)


@pytest.mark.parametrize("padding,stride,dilation,k", CONV_GRID)
def test_conv_2d(padding, stride, dilation, k):
    rng = rng_for((padding, stride, dilation, k))
    w, b = _rand(rng, 7, *k, 5), _rand(rng, 7)
    g = single_op_graph("CONV_2D", [(2, 9, 8, 5), w, b], _conv_attrs(padding, stride, dilation))
    compare_with_litert(g, random_feeds(g, rng))


def _compare_no_bias(op_type, inputs, attrs, rng, bias_len, scale=2.0):
    """LiteRT's float conv kernels insist on a bias tensor, so the no-bias reference runs
    against LiteRT with an all-zero bias."""
    g = single_op_graph(op_type, [*inputs, np.zeros(bias_len, np.float32)], attrs)
    feeds = random_feeds(g, rng, scale=scale)
    want = compare_with_litert(g, feeds)
    for no_bias in (inputs, [*inputs, None]):  # two inputs, or an omitted (-1) third
        got = Interpreter(single_op_graph(op_type, no_bias, attrs), np.float64).run(feeds)
        np.testing.assert_array_equal(got["output0"], want["output0"])


@pytest.mark.parametrize("act", ACTIVATIONS)
def test_conv_2d_activation(act):
    rng = np.random.default_rng(1)
    g = single_op_graph(
        "CONV_2D",
        [(1, 6, 7, 3), _rand(rng, 6, 3, 3, 3), _rand(rng, 6)],
        _conv_attrs("SAME", (1, 1), act=act),
    )
    compare_with_litert(g, random_feeds(g, rng, scale=2.0))


def test_conv_2d_no_bias():
    rng = np.random.default_rng(11)
    attrs = _conv_attrs("VALID", (2, 1))
    _compare_no_bias("CONV_2D", [(1, 6, 7, 3), _rand(rng, 4, 3, 2, 3)], attrs, rng, 4)


def test_conv_2d_grouped():
    # 6 input channels, filter sees 2: three groups of 2 in -> 3 out each.
    rng = np.random.default_rng(2)
    g = single_op_graph(
        "CONV_2D",
        [(1, 5, 5, 6), _rand(rng, 9, 3, 3, 2), _rand(rng, 9)],
        _conv_attrs("SAME", (1, 1)),
    )
    compare_with_litert(g, random_feeds(g, rng))


DW_GRID = list(
    itertools.product(["SAME", "VALID"], [(1, 1), (2, 2)], [(1, 1), (2, 3)], [1, 2], [3, 5])
)


@pytest.mark.parametrize("padding,stride,dilation,mult,c", DW_GRID)
def test_depthwise_conv_2d(padding, stride, dilation, mult, c):
    rng = rng_for((padding, stride, dilation, mult, c))
    w, b = _rand(rng, 1, 3, 3, c * mult), _rand(rng, c * mult)
    attrs = _conv_attrs(padding, stride, dilation) | {"depth_multiplier": mult}
    g = single_op_graph("DEPTHWISE_CONV_2D", [(1, 9, 10, c), w, b], attrs)
    compare_with_litert(g, random_feeds(g, rng))


@pytest.mark.parametrize("act", ACTIVATIONS)
def test_depthwise_activation(act):
    rng = np.random.default_rng(3)
    attrs = _conv_attrs("SAME", (2, 2), act=act) | {"depth_multiplier": 1}
    inputs = [(1, 7, 7, 4), _rand(rng, 1, 5, 5, 4), _rand(rng, 4)]
    g = single_op_graph("DEPTHWISE_CONV_2D", inputs, attrs)
    compare_with_litert(g, random_feeds(g, rng, scale=2.0))


def test_depthwise_no_bias():
    rng = np.random.default_rng(12)
    attrs = _conv_attrs("SAME", (1, 1)) | {"depth_multiplier": 2}
    _compare_no_bias("DEPTHWISE_CONV_2D", [(1, 5, 6, 3), _rand(rng, 1, 3, 3, 6)], attrs, rng, 6)


def _tconv_out(padding, size, k, s):
    return size * s if padding == "SAME" else (size - 1) * s + k


TCONV_GRID = list(itertools.product(["SAME", "VALID"], [1, 2, 3], [(2, 2), (3, 3), (4, 3)]))


@pytest.mark.parametrize("padding,stride,k", TCONV_GRID)
def test_transpose_conv(padding, stride, k):
    rng = rng_for((padding, stride, k))
    h, w_ = 4, 5
    shape = np.array(
        [1, _tconv_out(padding, h, k[0], stride), _tconv_out(padding, w_, k[1], stride), 6],
        np.int32,
    )
    attrs = {"padding": padding, "stride_h": stride, "stride_w": stride}
    g = single_op_graph(
        "TRANSPOSE_CONV", [shape, _rand(rng, 6, *k, 3), (1, h, w_, 3), _rand(rng, 6)], attrs
    )
    compare_with_litert(g, random_feeds(g, rng))


@pytest.mark.parametrize("act", ACTIVATIONS)
def test_transpose_conv_activation_no_bias(act):
    rng = np.random.default_rng(4)
    shape = np.array([2, 8, 6, 5], np.int32)
    attrs = {"padding": "SAME", "stride_h": 2, "stride_w": 2, "fused_activation_function": act}
    g = single_op_graph("TRANSPOSE_CONV", [shape, _rand(rng, 5, 3, 3, 2), (2, 4, 3, 2)], attrs)
    compare_with_litert(g, random_feeds(g, rng, scale=2.0))


@pytest.mark.parametrize("padding,out_hw", [("SAME", (7, 5)), ("SAME", (8, 5)), ("VALID", (10, 8))])
def test_transpose_conv_other_output_shape(padding, out_hw):
    # Output sizes other than the "natural" one (LiteRT accepts those whose forward conv
    # gives back the input size): the padding follows the output size.
    rng = np.random.default_rng(5)
    shape = np.array([1, *out_hw, 3], np.int32)
    attrs = {"padding": padding, "stride_h": 2, "stride_w": 2}
    g = single_op_graph(
        "TRANSPOSE_CONV", [shape, _rand(rng, 3, 3, 3, 4), (1, 4, 3, 4), None], attrs
    )
    compare_with_litert(g, random_feeds(g, rng))


@pytest.mark.parametrize(
    "in_shape,keep", [((3, 7), False), ((1, 2, 3, 7), False), ((1, 2, 3, 7), True)]
)
@pytest.mark.parametrize("act", ["NONE", "RELU6"])
def test_fully_connected(in_shape, keep, act):
    rng = np.random.default_rng(6)
    attrs = {"fused_activation_function": act, "keep_num_dims": keep}
    g = single_op_graph("FULLY_CONNECTED", [in_shape, _rand(rng, 5, 7), _rand(rng, 5)], attrs)
    compare_with_litert(g, random_feeds(g, rng, scale=3.0))


def test_fully_connected_no_bias():
    rng = np.random.default_rng(7)
    g = single_op_graph("FULLY_CONNECTED", [(2, 9), _rand(rng, 3, 9), None], {})
    compare_with_litert(g, random_feeds(g, rng))


# --- Convolution2DTransposeBias: no LiteRT kernel, so an independent float64 loop ---


def _transpose_conv_bias_loop(x, w, b, padding, sh, sw):
    """From the definition (docs/models.md): output starts as bias; input
    pixel (iy, ix) adds x * w into out[iy*s - pad_before + fy, ix*s - pad_before + fx]."""
    n, h, wd, cin = x.shape
    cout, kh, kw, _ = w.shape
    th = max(0, kh - (h - 1) % sh - 1) if padding == "SAME" else 0
    tw = max(0, kw - (wd - 1) % sw - 1) if padding == "SAME" else 0
    oh, ow = sh * (h - 1) + kh - th, sw * (wd - 1) + kw - tw
    out = np.empty((n, oh, ow, cout))
    out[:] = b.astype(np.float64)
    for bi in range(n):
        for iy in range(h):
            for ix in range(wd):
                for fy in range(kh):
                    for fx in range(kw):
                        oy, ox = iy * sh - th // 2 + fy, ix * sw - tw // 2 + fx
                        if 0 <= oy < oh and 0 <= ox < ow:
                            out[bi, oy, ox] += w[:, fy, fx, :].astype(np.float64) @ x[bi, iy, ix]
    return out


CTB_GRID = [
    ("SAME", 2, 2, (4, 4), (1, 5, 6, 3)),
    ("SAME", 2, 2, (4, 4), (1, 3, 4, 3)),
    ("SAME", 2, 2, (3, 3), (1, 5, 6, 3)),
    ("SAME", 1, 1, (3, 3), (2, 4, 4, 2)),
    ("SAME", 3, 2, (2, 5), (1, 4, 5, 3)),
    ("VALID", 2, 2, (4, 4), (1, 5, 6, 3)),
    ("VALID", 2, 3, (3, 2), (1, 3, 4, 5)),
    ("VALID", 1, 1, (1, 1), (1, 3, 3, 4)),
]


@pytest.mark.parametrize("padding,sh,sw,k,in_shape", CTB_GRID)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_convolution_2d_transpose_bias(padding, sh, sw, k, in_shape, dtype):
    rng = np.random.default_rng(8)
    cout = 7
    w, b = _rand(rng, cout, *k, in_shape[3]), _rand(rng, cout)
    attrs = {"padding": padding, "stride_w": sw, "stride_h": sh}
    g = single_op_graph("Convolution2DTransposeBias", [in_shape, w, b], attrs, custom=True)
    feeds = random_feeds(g, rng)
    want = _transpose_conv_bias_loop(feeds["input0"].astype(np.float64), w, b, padding, sh, sw)
    got = Interpreter(g, dtype).run(feeds)["output0"]
    assert got.shape == want.shape
    assert max_error(want, got) <= 1e-5


@pytest.mark.parametrize(
    "padding,sh,sw,k,in_shape", [c for c in CTB_GRID if c[1] <= c[3][0] and c[2] <= c[3][1]]
)
def test_convolution_2d_transpose_bias_vs_xnnpack(padding, sh, sw, k, in_shape):
    # LiteRT has no builtin kernel for this custom op, but its XNNPACK delegate implements
    # it (strides up to the kernel size): a second, independent oracle.
    rng = np.random.default_rng(9)
    w, b = _rand(rng, 6, *k, in_shape[3]), _rand(rng, 6)
    attrs = {"padding": padding, "stride_w": sw, "stride_h": sh}
    g = single_op_graph("Convolution2DTransposeBias", [in_shape, w, b], attrs, custom=True)
    feeds = random_feeds(g, rng)
    assert_close(run_litert(g, feeds, "xnnpack"), Interpreter(g, np.float64).run(feeds))
