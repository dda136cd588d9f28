"""RESIZE_BILINEAR / RESIZE_NEAREST_NEIGHBOR vs LiteRT, over align_corners x
half_pixel_centers and up-, down- and non-integer scales."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from engine.errors import ModelError
from engine.reference import Interpreter
from tests.helpers.single_op import compare_with_litert, random_feeds, single_op_graph

pytest.importorskip("ai_edge_litert")

SIZES = [(10, 14), (3, 4), (8, 8), (1, 1), (5, 7), (9, 13), (16, 3), (2, 1)]
FLAGS = [(False, False), (True, False), (False, True)]


def _graph(op_type, in_shape, size, align, half):
    attrs = {"align_corners": align, "half_pixel_centers": half}
    return single_op_graph(op_type, [in_shape, np.array(size, np.int32)], attrs)


@pytest.mark.parametrize("size,flags", list(itertools.product(SIZES, FLAGS)), ids=str)
def test_resize_bilinear(size, flags):
    g = _graph("RESIZE_BILINEAR", (2, 5, 7, 3), size, *flags)
    compare_with_litert(g, random_feeds(g, np.random.default_rng(0)))


@pytest.mark.parametrize(
    "size,flags", list(itertools.product(SIZES, [*FLAGS, (True, True)])), ids=str
)
def test_resize_nearest_neighbor(size, flags):
    g = _graph("RESIZE_NEAREST_NEIGHBOR", (1, 5, 7, 3), size, *flags)
    compare_with_litert(g, random_feeds(g, np.random.default_rng(1)), tol=0.0)


@pytest.mark.parametrize("op_type", ["RESIZE_BILINEAR", "RESIZE_NEAREST_NEIGHBOR"])
@pytest.mark.parametrize("in_hw,size", [((3, 3), (7, 11)), ((6, 10), (9, 15)), ((4, 4), (6, 6))])
def test_resize_ties(op_type, in_hw, size):
    # Scales such as 3/7, 2/3 and 6/9 put source coordinates on exact .5 ties, where the
    # float32 coordinate math decides which pixel nearest-neighbour picks.
    for flags in FLAGS:
        g = _graph(op_type, (1, *in_hw, 2), size, *flags)
        feeds = random_feeds(g, np.random.default_rng(2))
        compare_with_litert(g, feeds, tol=0.0 if "NEAREST" in op_type else 1e-5)


def test_resize_bilinear_rejects_align_corners_with_half_pixel():
    # LiteRT refuses this pair at prepare time (XNNPACK silently computes something else).
    attrs = {"align_corners": True, "half_pixel_centers": True}
    inputs = [(1, 4, 4, 1), np.array([8, 8], np.int32)]
    g = single_op_graph("RESIZE_BILINEAR", inputs, attrs, out_shapes=[(1, 8, 8, 1)])
    with pytest.raises(ModelError, match="half_pixel_centers"):
        Interpreter(g).run([np.zeros((1, 4, 4, 1), np.float32)])
