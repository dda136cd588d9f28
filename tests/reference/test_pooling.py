"""MAX_POOL_2D, AVERAGE_POOL_2D and MEAN vs LiteRT."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from tests.helpers.single_op import compare_with_litert, random_feeds, single_op_graph

pytest.importorskip("ai_edge_litert")

POOL_GRID = list(
    itertools.product(
        ["MAX_POOL_2D", "AVERAGE_POOL_2D"],
        ["SAME", "VALID"],
        [(1, 1), (2, 2), (2, 1)],
        [(2, 2), (3, 3), (3, 2)],
    )
)


def _pool_attrs(padding, stride, k, act="NONE"):
    return {
        "padding": padding,
        "stride_h": stride[0],
        "stride_w": stride[1],
        "filter_height": k[0],
        "filter_width": k[1],
        "fused_activation_function": act,
    }


@pytest.mark.parametrize("op_type,padding,stride,k", POOL_GRID)
def test_pool(op_type, padding, stride, k):
    rng = np.random.default_rng(0)
    g = single_op_graph(op_type, [(2, 7, 9, 3)], _pool_attrs(padding, stride, k))
    compare_with_litert(g, random_feeds(g, rng))


@pytest.mark.parametrize("act", ["NONE", "RELU", "RELU6", "RELU_N1_TO_1"])
@pytest.mark.parametrize("op_type", ["MAX_POOL_2D", "AVERAGE_POOL_2D"])
def test_pool_activation(op_type, act):
    rng = np.random.default_rng(1)
    g = single_op_graph(op_type, [(1, 6, 6, 5)], _pool_attrs("SAME", (2, 2), (3, 3), act))
    compare_with_litert(g, random_feeds(g, rng, scale=8.0))


def test_average_pool_counts_only_in_bounds_taps():
    # A 3x3 SAME window at a corner sees 4 real pixels: all-ones input must stay 1.
    g = single_op_graph("AVERAGE_POOL_2D", [(1, 4, 4, 1)], _pool_attrs("SAME", (1, 1), (3, 3)))
    feeds = {"input0": np.ones((1, 4, 4, 1), np.float32)}
    got = compare_with_litert(g, feeds)["output0"]
    np.testing.assert_array_equal(got, np.ones_like(got))


def test_global_average_pool():
    rng = np.random.default_rng(2)
    g = single_op_graph("AVERAGE_POOL_2D", [(1, 8, 8, 6)], _pool_attrs("VALID", (1, 1), (8, 8)))
    compare_with_litert(g, random_feeds(g, rng))


@pytest.mark.parametrize("axes", [[1, 2], [-1], [0, 2], [3], [2, 1, -2], [0, 1, 2, 3]], ids=str)
@pytest.mark.parametrize("keep", [True, False])
def test_mean(axes, keep):
    rng = np.random.default_rng(3)
    g = single_op_graph("MEAN", [(2, 5, 6, 3), np.array(axes, np.int32)], {"keep_dims": keep})
    compare_with_litert(g, random_feeds(g, rng))
