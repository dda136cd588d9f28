"""DEPTHWISE_CONV_2D kernels (tiled and generic) vs the reference interpreter."""

from __future__ import annotations

import zlib

import numpy as np
import pytest

from engine.gpu.kernels import tile_tables
from engine.gpu.kernels.base import BuildContext, select
from tests.helpers.conv_cases import DEPTHWISE_CASES, depthwise_graph
from tests.helpers.gpu import STORAGES, add_input, assert_matches, gpu_context
from tests.helpers.seeds import rng_for
from tests.helpers.single_op import random_feeds, single_op_graph

ctx = gpu_context()


@pytest.mark.parametrize("storage", STORAGES)
@pytest.mark.parametrize("case", DEPTHWISE_CASES, ids=[str(c) for c in DEPTHWISE_CASES])
def test_depthwise(case, storage):
    rng = rng_for(case)
    graph = depthwise_graph(*case, rng)
    engine = assert_matches(graph, random_feeds(graph, rng), storage=storage)
    assert engine.stats.submits == 1 and not engine.fallback_ops
    _, _, _, _, mult, k, stride, dil, _, _ = case
    tiled = mult == 1 and k <= 5 and stride <= 2 and dil == 1
    want = "depthwise_tiled" if tiled else "depthwise"
    assert select(graph.ops[0], graph).name == want


@pytest.mark.parametrize("storage", STORAGES)
def test_depthwise_no_bias_explicit_padding(storage):
    """A merged PAD: explicit (top, bottom, left, right) zero padding, asymmetric."""
    rng = np.random.default_rng(5)
    for k, stride, mult in [(3, 1, 1), (3, 2, 1), (5, 2, 1), (3, 1, 2)]:
        weights = rng.standard_normal((1, k, k, 6 * mult)).astype(np.float32)
        attrs = {"padding": "SAME", "stride_w": stride, "stride_h": stride}
        out_h, out_w = (9 + 3 - k) // stride + 1, (8 + 2 - k) // stride + 1
        attrs |= {"depth_multiplier": mult, "explicit_padding": (2, 1, 0, 2)}
        graph = single_op_graph(
            "DEPTHWISE_CONV_2D",
            [(1, 9, 8, 6), weights, None],
            attrs,
            out_shapes=[(1, out_h, out_w, 6 * mult)],
        )
        assert_matches(graph, random_feeds(graph, rng), storage=storage)


@pytest.mark.parametrize("storage", STORAGES)
def test_depthwise_large_weights_split_into_uniform_blocks(storage):
    """5x5 over 704 channels: 176 slices x 25 vec4 = 70 KB, two dispatches sharing one
    pipeline; a residual add in the epilogue follows each dispatch's slice range."""
    rng = np.random.default_rng(3)
    graph = depthwise_graph(1, 5, 6, 704, 1, 5, 1, 1, "SAME", "RELU6", rng)
    residual = add_input(graph, "residual", (1, 5, 6, 704))
    graph.ops[0].attrs["epilogue"] = (("add", residual),)
    engine = assert_matches(graph, random_feeds(graph, rng), storage=storage)
    assert engine.dispatch_count == 2 + 3 * (storage == "texture")  # + the wrappers
    dispatches = select(graph.ops[0], graph).build(graph.ops[0], graph, BuildContext())
    assert len({d.source for d in dispatches}) == 1  # one pipeline for both


@pytest.mark.parametrize("storage", STORAGES)
def test_depthwise_epilogue_residual_and_logistic(storage):
    """Epilogue from transforms: residual add, then a sigmoid (padded lanes stay 0)."""
    rng = np.random.default_rng(9)
    graph = depthwise_graph(1, 6, 7, 6, 1, 3, 1, 1, "SAME", "NONE", rng)
    residual = add_input(graph, "residual", (1, 6, 7, 6))
    graph.ops[0].attrs["epilogue"] = (("add", residual), ("act", "LOGISTIC"))
    assert_matches(graph, random_feeds(graph, rng), storage=storage)  # + padded lanes


@pytest.mark.skipif(not ctx.has_f16, reason="adapter lacks shader-f16")
@pytest.mark.parametrize("storage", STORAGES)
@pytest.mark.parametrize("k,stride,mult", [(3, 1, 1), (5, 2, 1), (3, 1, 2)])
def test_depthwise_fp16(k, stride, mult, storage):
    rng = np.random.default_rng(k * 10 + stride + mult)
    graph = depthwise_graph(1, 9, 10, 6, mult, k, stride, 1, "SAME", "RELU", rng)
    assert_matches(graph, random_feeds(graph, rng), precision="fp16", storage=storage)


@pytest.mark.parametrize("storage", STORAGES)
@pytest.mark.parametrize("case", DEPTHWISE_CASES[:8], ids=[str(c) for c in DEPTHWISE_CASES[:8]])
def test_depthwise_gpu_class_rows_here(case, storage, monkeypatch):
    """The gpu class's depthwise rows (tile_tables.DEPTHWISE_TILES, one output per invocation)
    forced on this adapter, so CI's lavapipe runs what GPUs run."""
    here = tile_tables.adapter_class(ctx.info)
    for (cls, k, stride), row in list(tile_tables.DEPTHWISE_TILES.items()):
        if cls == "gpu":
            monkeypatch.setitem(tile_tables.DEPTHWISE_TILES, (here, k, stride), row)
    assert (
        tile_tables.depthwise_tile(here, 3, 1)
        == tile_tables.depthwise_tile("gpu", 3, 1)
        is not None
    )
    rng = np.random.default_rng(zlib.crc32(repr(case).encode()))
    graph = depthwise_graph(*case, rng)
    assert_matches(graph, random_feeds(graph, rng), storage=storage)
