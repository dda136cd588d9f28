"""RESIZE_BILINEAR / RESIZE_NEAREST_NEIGHBOR vs the reference interpreter (TFLite semantics:
align_corners, half_pixel_centers, nearest-neighbour ties)."""

from __future__ import annotations

import numpy as np
import pytest

from engine.gpu.kernels.base import select
from engine.model.ir import Graph, Op, Tensor
from tests.helpers.gpu import STORAGES, assert_matches, gpu_context
from tests.helpers.single_op import random_feeds, single_op_graph

ctx = gpu_context()

FLAGS = [(False, False), (True, False), (False, True)]  # (align_corners, half_pixel_centers)
SIZES = [
    # (input shape, output size): x2 upsampling as in selfie / pose / palm, then odd ratios
    ((1, 8, 8, 48), (16, 16)),
    ((1, 9, 16, 5), (18, 32)),
    ((1, 6, 7, 3), (13, 9)),  # not integer ratios, C % 4 != 0
    ((2, 5, 4, 6), (3, 11)),  # downscale one axis, batch 2
    ((1, 1, 1, 2), (4, 3)),  # a single source pixel
    ((1, 7, 5, 1), (1, 1)),
]


def graph(op_type: str, shape, size, align: bool, half: bool) -> Graph:
    attrs = {"align_corners": align, "half_pixel_centers": half}
    return single_op_graph(op_type, [shape, np.array(size, np.int32)], attrs)


def run(g: Graph, precision: str = "fp32", seed: int = 0, storage: str = "buffer"):
    assert select(g.ops[0], g).name == "resize"
    feeds = random_feeds(g, np.random.default_rng(seed))
    engine = assert_matches(g, feeds, precision, storage=storage)
    assert not engine.fallback_ops
    return engine


@pytest.mark.parametrize("storage", STORAGES)
@pytest.mark.parametrize("flags", FLAGS, ids=str)
@pytest.mark.parametrize("case", SIZES, ids=str)
def test_resize_bilinear(case, flags, storage):
    run(graph("RESIZE_BILINEAR", *case, *flags), storage=storage)


@pytest.mark.parametrize("storage", STORAGES)
@pytest.mark.parametrize("flags", FLAGS, ids=str)
@pytest.mark.parametrize("case", SIZES, ids=str)
def test_resize_nearest(case, flags, storage):
    run(graph("RESIZE_NEAREST_NEIGHBOR", *case, *flags), storage=storage)


@pytest.mark.parametrize("flags", FLAGS, ids=str)
def test_nearest_ties(flags):
    """Ratios where source coordinates land exactly on .0 / .5: ties must match."""
    for shape, size in [((1, 4, 6, 2), (8, 4)), ((1, 5, 3, 2), (9, 5)), ((1, 3, 5, 2), (5, 9))]:
        run(graph("RESIZE_NEAREST_NEIGHBOR", shape, size, *flags))


@pytest.mark.parametrize("storage", STORAGES)
def test_nearest_with_align_corners_and_half_pixel(storage):
    """Nearest takes both flags at once (LiteRT does: tests/reference/test_resize.py), up,
    down and on ties."""
    for shape, size in [((1, 4, 4, 2), (8, 8)), ((1, 5, 7, 3), (3, 4)), ((1, 4, 6, 2), (8, 4)),
                        ((1, 5, 3, 6), (9, 5))]:  # fmt: skip
        run(graph("RESIZE_NEAREST_NEIGHBOR", shape, size, True, True), storage=storage)


def test_align_and_half_pixel_declined():
    g = graph("RESIZE_NEAREST_NEIGHBOR", (1, 4, 4, 2), (8, 8), True, True)
    assert select(g.ops[0], g) is not None  # nearest allows the pair
    op = Op("RESIZE_BILINEAR", g.ops[0].inputs, g.ops[0].outputs, dict(g.ops[0].attrs))
    assert select(op, Graph(g.tensors, [op], g.inputs, g.outputs)) is None


def test_resize_epilogue_and_fp16():
    """A fused residual add + LOGISTIC (padded lanes stay 0), then fp16 storage."""
    g = graph("RESIZE_BILINEAR", (1, 6, 6, 7), (12, 12), False, True)
    tensors = [*g.tensors, Tensor("residual", (1, 12, 12, 7), "float32")]
    op = g.ops[0]
    attrs = {**op.attrs, "epilogue": (("add", len(tensors) - 1), ("act", "LOGISTIC"))}
    g2 = Graph(tensors, [Op(op.type, op.inputs, op.outputs, attrs)], [0, 3], g.outputs)
    run(g2)
    run(g2, storage="texture")  # the residual operand read from a texture too
    if ctx.has_f16:
        run(g, precision="fp16")
        run(g, precision="fp16", storage="texture")
