"""FULLY_CONNECTED vs the reference interpreter."""

from __future__ import annotations

import numpy as np
import pytest

from tests.helpers.gpu import assert_matches, gpu_context
from tests.helpers.seeds import rng_for
from tests.helpers.single_op import random_feeds, single_op_graph

ctx = gpu_context()

CASES = [
    # (input shape, in features, out features, keep_num_dims, activation, bias)
    ((1, 13), 13, 5, False, "NONE", True),
    ((3, 7), 7, 5, False, "RELU6", True),
    ((1, 2, 3, 7), 7, 5, False, "RELU", True),
    ((1, 2, 3, 7), 7, 5, True, "NONE", True),
    ((2, 9), 9, 3, False, "NONE", False),
    ((1, 1152), 1152, 63, False, "NONE", True),  # hand_landmark_full's head
    ((1, 672), 672, 1, False, "NONE", True),
    ((1, 2, 2, 8), 32, 6, False, "TANH", True),  # flattened across pixels: gather path
    ((2, 3, 10), 15, 4, False, "RELU_N1_TO_1", True),  # [4, 15]: rows straddle pixels
    ((1, 1, 1, 256), 256, 9, True, "NONE", True),
]


@pytest.mark.parametrize("case", CASES, ids=[str(c) for c in CASES])
def test_fully_connected(case):
    shape, features, out, keep, act, has_bias = case
    rng = rng_for(case)
    w = (rng.standard_normal((out, features)) / np.sqrt(features)).astype(np.float32)
    b = rng.standard_normal(out).astype(np.float32) if has_bias else None
    attrs = {"fused_activation_function": act, "keep_num_dims": keep}
    graph = single_op_graph("FULLY_CONNECTED", [shape, w, b], attrs)
    engine = assert_matches(graph, random_feeds(graph, rng, scale=2.0))
    assert engine.stats.submits == 1 and not engine.fallback_ops


def test_fully_connected_large_weights_in_storage():
    """1152 -> 200: 50 x 288 mat4x4 = 900 KB, more than a uniform binding: storage."""
    rng = np.random.default_rng(3)
    w = (rng.standard_normal((200, 1152)) * 0.03).astype(np.float32)
    graph = single_op_graph("FULLY_CONNECTED", [(1, 1152), w, None], {})
    engine = assert_matches(graph, random_feeds(graph, rng))
    assert engine.dispatch_count == 1


def test_fully_connected_epilogue_logistic_padded_lanes():
    rng = np.random.default_rng(4)
    w = rng.standard_normal((6, 12)).astype(np.float32)
    graph = single_op_graph("FULLY_CONNECTED", [(1, 12), w, None], {})
    graph.ops[0].attrs["epilogue"] = (("act", "LOGISTIC"),)
    assert_matches(graph, random_feeds(graph, rng))  # also checks the padded lanes


@pytest.mark.skipif(not ctx.has_f16, reason="adapter lacks shader-f16")
def test_fully_connected_fp16():
    rng = np.random.default_rng(5)
    w = (rng.standard_normal((10, 40)) / 8).astype(np.float32)
    graph = single_op_graph("FULLY_CONNECTED", [(2, 40), w, w[:, 0].copy()], {})
    assert_matches(graph, random_feeds(graph, rng), precision="fp16")
