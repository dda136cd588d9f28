"""TRANSPOSE_CONV and Convolution2DTransposeBias (gather kernel) vs the reference."""

from __future__ import annotations

import numpy as np
import pytest

from engine.gpu.kernels.base import BuildContext, select
from tests.helpers.conv_cases import TCONV_GRID, rand, tconv_graph
from tests.helpers.gpu import STORAGES, assert_matches, gpu_context
from tests.helpers.seeds import rng_for
from tests.helpers.single_op import random_feeds, single_op_graph

ctx = gpu_context()


@pytest.mark.parametrize("storage", STORAGES)
@pytest.mark.parametrize("padding,stride,k", TCONV_GRID)
def test_transpose_conv(padding, stride, k, storage):
    rng = rng_for((padding, stride, k))
    graph = tconv_graph(padding, stride, k, rng)
    engine = assert_matches(graph, random_feeds(graph, rng), storage=storage)
    assert engine.stats.submits == 1 and not engine.fallback_ops


@pytest.mark.parametrize("act", ["RELU6", "TANH"])
def test_transpose_conv_activation_no_bias_batch(act):
    rng = np.random.default_rng(4)
    graph = tconv_graph(
        "SAME", (2, 2), (3, 3), rng, cin=2, cout=5, hw=(4, 3), b=2, bias=False, act=act
    )
    assert_matches(graph, random_feeds(graph, rng, scale=2.0))


@pytest.mark.parametrize("padding,out_hw", [("SAME", (7, 5)), ("SAME", (8, 5)), ("VALID", (10, 8))])
def test_transpose_conv_other_output_shape(padding, out_hw):
    rng = np.random.default_rng(5)
    shape = np.array([1, *out_hw, 3], np.int32)
    attrs = {"padding": padding, "stride_h": 2, "stride_w": 2}
    graph = single_op_graph(
        "TRANSPOSE_CONV", [shape, rand(rng, 3, 3, 3, 4), (1, 4, 3, 4), None], attrs
    )
    assert_matches(graph, random_feeds(graph, rng))


def test_transpose_conv_many_channels():
    """40 -> 9 channels: a reduction loop over 10 source slices, padded output lanes."""
    rng = np.random.default_rng(6)
    graph = tconv_graph("SAME", (2, 2), (4, 4), rng, cin=40, cout=9, hw=(5, 4))
    assert_matches(graph, random_feeds(graph, rng, scale=0.5))


def test_transpose_conv_large_weights_split_into_uniform_blocks():
    """4x4 taps, 64 -> 64 channels: 256 KB of weights, several uniform blocks."""
    rng = np.random.default_rng(7)
    graph = tconv_graph("SAME", (2, 2), (4, 4), rng, cin=64, cout=64, hw=(3, 4))
    engine = assert_matches(graph, random_feeds(graph, rng, scale=0.3))
    assert engine.dispatch_count == 4
    dispatches = select(graph.ops[0], graph).build(graph.ops[0], graph, BuildContext())
    assert len({d.source for d in dispatches}) == 1  # one pipeline for all four


CTB_GRID = [
    ("SAME", 2, 2, (2, 2), (1, 8, 8, 16)),  # selfie segmentation's last layer, small
    ("SAME", 2, 2, (4, 4), (1, 5, 6, 3)),
    ("SAME", 2, 2, (3, 3), (1, 5, 6, 3)),
    ("SAME", 1, 1, (3, 3), (2, 4, 4, 2)),
    ("SAME", 3, 2, (2, 5), (1, 4, 5, 3)),
    ("VALID", 2, 3, (3, 2), (1, 3, 4, 5)),
    ("VALID", 1, 1, (1, 1), (1, 3, 3, 4)),
]


@pytest.mark.parametrize("storage", STORAGES)
@pytest.mark.parametrize("padding,sh,sw,k,in_shape", CTB_GRID)
def test_convolution_2d_transpose_bias(padding, sh, sw, k, in_shape, storage):
    rng = np.random.default_rng(8)
    cout = 1 if in_shape[3] == 16 else 7
    w, b = rand(rng, cout, *k, in_shape[3]), rand(rng, cout)
    attrs = {"padding": padding, "stride_w": sw, "stride_h": sh}
    graph = single_op_graph("Convolution2DTransposeBias", [in_shape, w, b], attrs, custom=True)
    engine = assert_matches(graph, random_feeds(graph, rng), storage=storage)
    assert not engine.fallback_ops


def test_convolution_2d_transpose_bias_epilogue_logistic():
    """A fused sigmoid after the custom op (selfie mask): padded lanes stay 0."""
    rng = np.random.default_rng(9)
    w, b = rand(rng, 1, 2, 2, 16), rand(rng, 1)
    attrs = {"padding": "SAME", "stride_w": 2, "stride_h": 2}
    graph = single_op_graph("Convolution2DTransposeBias", [(1, 6, 5, 16), w, b], attrs, custom=True)
    graph.ops[0].attrs["epilogue"] = (("act", "LOGISTIC"),)
    feeds = random_feeds(graph, rng)
    assert_matches(graph, feeds)  # also checks the padded lanes
    assert_matches(graph, feeds, storage="texture")


@pytest.mark.skipif(not ctx.has_f16, reason="adapter lacks shader-f16")
def test_transpose_conv_fp16():
    rng = np.random.default_rng(10)
    graph = tconv_graph("SAME", (2, 2), (3, 3), rng, cin=5, cout=6)
    feeds = random_feeds(graph, rng, scale=0.5)
    assert_matches(graph, feeds, precision="fp16")
    assert_matches(graph, feeds, precision="fp16", storage="texture")
