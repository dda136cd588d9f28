"""CONV_2D kernels vs the reference interpreter on lavapipe (or any adapter)."""

from __future__ import annotations

import numpy as np
import pytest

from tests.helpers.conv_cases import CONV_CASES
from tests.helpers.gpu import STORAGES, assert_matches, conv_attrs, gpu_context
from tests.helpers.seeds import rng_for
from tests.helpers.single_op import random_feeds, single_op_graph

ctx = gpu_context()


@pytest.mark.parametrize("storage", STORAGES)
@pytest.mark.parametrize("case", CONV_CASES, ids=[str(c) for c in CONV_CASES])
def test_conv2d(case, storage):
    h, w, cin, cout, k, stride, dil, padding, act = case
    rng = rng_for(case)
    weights = rng.standard_normal((cout, k, k, cin)).astype(np.float32)
    bias = rng.standard_normal(cout).astype(np.float32)
    attrs = conv_attrs(padding, stride, dil, act)
    graph = single_op_graph("CONV_2D", [(1, h, w, cin), weights, bias], attrs)
    engine = assert_matches(graph, random_feeds(graph, rng), storage=storage)
    assert engine.stats.submits == 1


@pytest.mark.parametrize("cout, dispatches", [(24, 2), (64, 1)])
def test_conv2d_large_weights(cout, dispatches):
    """3x3x128 weights: 18 KiB per output slice. 24 outputs: two 64 KiB uniform blocks
    (two dispatches); 64 outputs would need 6, so one dispatch reads storage weights."""
    rng = np.random.default_rng(3)
    weights = (rng.standard_normal((cout, 3, 3, 128)) * 0.05).astype(np.float32)
    attrs = {"padding": "SAME", "stride_w": 1, "stride_h": 1, "fused_activation_function": "NONE"}
    graph = single_op_graph("CONV_2D", [(1, 6, 5, 128), weights, None], attrs)
    engine = assert_matches(graph, random_feeds(graph, rng))
    assert engine.dispatch_count == dispatches


@pytest.mark.parametrize("storage", STORAGES)
def test_fused_logistic_keeps_padded_lanes_zero(storage):
    """conv (6 channels) + fused LOGISTIC: sigmoid(0) = 0.5 must not leak into lanes 6, 7."""
    from engine.transforms import run_all

    rng = np.random.default_rng(5)
    weights = rng.standard_normal((6, 1, 1, 3)).astype(np.float32)
    attrs = {"padding": "SAME", "stride_w": 1, "stride_h": 1, "fused_activation_function": "NONE"}
    graph = single_op_graph("CONV_2D", [(1, 4, 5, 3), weights, None], attrs)
    conv = graph.ops[0]
    graph.ops[0] = type(conv)(
        conv.type, conv.inputs, conv.outputs, {**attrs, "epilogue": (("act", "LOGISTIC"),)}
    )
    assert_matches(run_all(graph), random_feeds(graph, rng), storage=storage)


@pytest.mark.skipif(not ctx.has_f16, reason="adapter lacks shader-f16")
@pytest.mark.parametrize("storage", STORAGES)
@pytest.mark.parametrize("case", CONV_CASES[:4], ids=[str(c) for c in CONV_CASES[:4]])
def test_conv2d_fp16(case, storage):
    h, w, cin, cout, k, stride, dil, padding, act = case
    rng = np.random.default_rng(11)
    weights = rng.standard_normal((cout, k, k, cin)).astype(np.float32)
    attrs = conv_attrs(padding, stride, dil, act)
    graph = single_op_graph("CONV_2D", [(1, h, w, cin), weights, None], attrs)
    assert_matches(graph, random_feeds(graph, rng), precision="fp16", storage=storage)


def test_grouped_conv_runs_on_the_cpu_and_matches_litert():
    """Input channels a multiple of the filter's (a grouped conv, valid TFLite): no GPU
    kernel takes it (each assumes one group), the reference runs it, as LiteRT does."""
    from engine.gpu.engine import Engine
    from tests.helpers.single_op import assert_close, run_litert

    rng = np.random.default_rng(5)
    w = rng.standard_normal((8, 3, 3, 3)).astype(np.float32)
    b = rng.standard_normal(8).astype(np.float32)  # LiteRT's grouped conv wants a bias
    g = single_op_graph("CONV_2D", [(1, 9, 9, 6), w, b], conv_attrs("SAME", 2))
    feeds = random_feeds(g, rng)
    engine = Engine(g)
    assert engine.fallback_ops == ["#0 CONV_2D"]
    assert_close(run_litert(g, feeds), engine.run(feeds), tol=1e-5)
