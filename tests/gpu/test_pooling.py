"""Pooling kernels (windowed, global) and MEAN over H,W vs the reference."""

from __future__ import annotations

import numpy as np
import pytest

from engine.gpu.kernels import tile_tables
from engine.gpu.kernels.base import select
from engine.reference import Interpreter
from tests.helpers.gpu import (
    STORAGES,
    assert_padded_lanes_zero,
    check_single_submit,
    gpu_context,
    texture_wrapped,
)
from tests.helpers.single_op import random_feeds, single_op_graph

ctx = gpu_context()

POOL_CASES = [
    # (op, h, w, c, kernel, stride, padding, activation)
    ("MAX_POOL_2D", 16, 16, 28, 2, 2, "SAME", "NONE"),  # face_detection_short_range
    ("MAX_POOL_2D", 12, 12, 16, 2, 2, "VALID", "NONE"),  # face_landmark
    ("MAX_POOL_2D", 9, 11, 5, 3, 2, "SAME", "RELU"),
    ("MAX_POOL_2D", 7, 8, 3, 3, 1, "SAME", "RELU6"),
    ("AVERAGE_POOL_2D", 9, 11, 6, 3, 2, "SAME", "NONE"),  # edge windows: in-bounds count
    ("AVERAGE_POOL_2D", 10, 7, 13, 3, 1, "SAME", "RELU_N1_TO_1"),
    ("AVERAGE_POOL_2D", 8, 8, 4, 2, 2, "VALID", "RELU"),
    ("AVERAGE_POOL_2D", 7, 9, 1, 5, 3, "VALID", "NONE"),
]


def pool_attrs(k, stride, padding, act="NONE", kw=None):
    return {
        "filter_height": k,
        "filter_width": kw or k,
        "stride_h": stride,
        "stride_w": stride,
        "padding": padding,
        "fused_activation_function": act,
    }


@pytest.mark.parametrize("storage", STORAGES)
@pytest.mark.parametrize("case", POOL_CASES, ids=lambda c: "-".join(map(str, c)))
def test_pool2d(case, storage):
    op, h, w, c, k, stride, padding, act = case
    graph = single_op_graph(op, [(1, h, w, c)], pool_attrs(k, stride, padding, act))
    check_single_submit(
        graph, random_feeds(graph, np.random.default_rng(1), scale=4.0), storage=storage
    )


@pytest.mark.parametrize("storage", STORAGES)
def test_pool2d_batch(storage):
    graph = single_op_graph("MAX_POOL_2D", [(2, 6, 5, 7)], pool_attrs(2, 2, "SAME"))
    check_single_submit(graph, random_feeds(graph, np.random.default_rng(2)), storage=storage)


@pytest.mark.parametrize("op", ["MAX_POOL_2D", "AVERAGE_POOL_2D"])
@pytest.mark.parametrize("storage", STORAGES)
def test_pool2d_explicit_padding(op, storage):
    """A merged PAD: padded taps are zeros that count (also for max: all-negative -> 0)."""
    from engine.gpu.engine import Engine

    pads, (h, w, c), k = (1, 2, 0, 1), (6, 7, 5), 3
    x = np.random.default_rng(3).uniform(-2, -0.5, (1, h, w, c)).astype(np.float32)
    padded = np.pad(x, ((0, 0), pads[:2], pads[2:], (0, 0)))
    plain = single_op_graph(op, [padded.shape], pool_attrs(k, 2, "VALID"))
    want = Interpreter(plain).run({"input0": padded})["output0"]
    attrs = {**pool_attrs(k, 2, "VALID"), "explicit_padding": pads}
    graph = single_op_graph(op, [x.shape], attrs, out_shapes=[want.shape])
    wrapped = texture_wrapped(graph) if storage == "texture" else graph
    engine = Engine(wrapped, transforms=False, storage=storage)
    engine.poison()
    got = engine.run({"input0": x})["output0"]
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-5)
    assert_padded_lanes_zero(engine)


GLOBAL_CASES = [
    ("AVERAGE_POOL_2D", (1, 64, 64, 16)),  # selfie_segmentation SE blocks
    ("AVERAGE_POOL_2D", (1, 16, 16, 96)),
    ("AVERAGE_POOL_2D", (2, 5, 3, 6)),
    ("MAX_POOL_2D", (1, 9, 7, 5)),
    ("MAX_POOL_2D", (1, 40, 30, 6)),  # >= lavapipe's tree threshold: work group tree
    ("MAX_POOL_2D", (1, 8, 8, 5)),  # a 256-wide tree (the gpu row) over 64 pixels
]


@pytest.mark.parametrize("storage", STORAGES)
@pytest.mark.parametrize("case", GLOBAL_CASES, ids=lambda c: f"{c[0]}-{c[1]}")
def test_global_pool(case, storage):
    op, shape = case
    _, h, w, _ = shape
    attrs = {**pool_attrs(h, h, "VALID", "RELU", kw=w), "stride_w": w}
    graph = single_op_graph(op, [shape], attrs)
    assert select(graph.ops[0], graph).name == "global_pool"
    check_single_submit(graph, random_feeds(graph, np.random.default_rng(4)), storage=storage)


MEAN_CASES = [
    ((1, 36, 64, 16), True),  # selfie_segmentation_landscape
    ((1, 9, 16, 96), True),
    ((1, 7, 7, 1152), False),  # hand_landmark_full
    ((1, 7, 7, 13), False),
    ((3, 5, 4, 6), True),
    ((3, 5, 4, 6), False),
    ((1, 1, 1, 5), True),
    ((2, 32, 40, 5), False),  # tree path with batch
]


@pytest.mark.parametrize("case", MEAN_CASES, ids=str)
@pytest.mark.parametrize("axes", [(1, 2), (-2, 1)])
@pytest.mark.parametrize("storage", STORAGES)
def test_mean(case, axes, storage):
    shape, keep = case
    graph = single_op_graph("MEAN", [shape, np.array(axes, np.int32)], {"keep_dims": keep})
    check_single_submit(graph, random_feeds(graph, np.random.default_rng(5)), storage=storage)


def test_mean_other_axes_use_the_reduce_kernel():
    """MEAN over the channels: the any-axes kernel (tests/gpu/test_transformer_ops.py)."""
    graph = single_op_graph("MEAN", [(1, 4, 5, 6), np.array([3], np.int32)], {"keep_dims": True})
    assert select(graph.ops[0], graph).name == "reduce"


@pytest.mark.skipif(not ctx.has_f16, reason="adapter lacks shader-f16")
@pytest.mark.parametrize("storage", STORAGES)
def test_pool_and_mean_fp16(storage):
    graph = single_op_graph("AVERAGE_POOL_2D", [(1, 9, 8, 6)], pool_attrs(3, 2, "SAME"))
    check_single_submit(graph, random_feeds(graph, np.random.default_rng(6)), "fp16", storage)
    graph = single_op_graph("MEAN", [(1, 9, 8, 6), np.array([1, 2], np.int32)], {})
    check_single_submit(graph, random_feeds(graph, np.random.default_rng(7)), "fp16", storage)


REDUCE_ROWS = sorted(
    {tile_tables.REDUCE_TILE, *tile_tables.REDUCE_TILES.values()}, key=lambda t: t.wg
)


@pytest.mark.parametrize("row", REDUCE_ROWS, ids=str)
@pytest.mark.parametrize("case", GLOBAL_CASES, ids=lambda c: f"{c[0]}-{c[1]}")
def test_global_pool_every_class_row_here(case, row, monkeypatch):
    """Each adapter class's reduce row (tile_tables.REDUCE_TILES) forced on this adapter: the
    tree from 64 pixels with 256 invocations that GPUs use runs on lavapipe in CI too."""
    monkeypatch.setitem(tile_tables.REDUCE_TILES, tile_tables.adapter_class(ctx.info), row)
    op, shape = case
    _, h, w, _ = shape
    graph = single_op_graph(op, [shape], {**pool_attrs(h, h, "VALID", "NONE", kw=w), "stride_w": w})
    check_single_submit(graph, random_feeds(graph, np.random.default_rng(5)), storage="buffer")


def test_reduce_tile_needs_a_power_of_two():
    with pytest.raises(ValueError, match="power of two"):
        tile_tables.ReduceTile(64, 96)  # mean.wgsl's halving tree would drop partial sums
