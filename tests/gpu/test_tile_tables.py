"""Per-adapter-class tiles: the class from adapter facts, the tables' shapes, and the
kernels under every class's entries (forced on this adapter) vs the reference."""

from __future__ import annotations

import numpy as np
import pytest

from engine.gpu.kernels import tile_tables
from engine.gpu.kernels.base import BuildContext, select
from tests.helpers.gpu import STORAGES, assert_matches, conv_attrs, gpu_context
from tests.helpers.single_op import random_feeds, single_op_graph

ctx = gpu_context()
CLASS = tile_tables.adapter_class(ctx.info)


@pytest.mark.parametrize(
    "info, expected",
    [
        ({"vendor": "SwiftShader driver", "device": "SwiftShader Device (Subzero)"}, "swiftshader"),
        ({"vendor": "Mesa", "device": "llvmpipe (LLVM 15.0.6, 256 bits)"}, "llvmpipe"),
        ({"vendor": "NVIDIA", "device": "NVIDIA H100", "adapter_type": "DiscreteGPU"}, "gpu"),
        ({}, "gpu"),
    ],
)
def test_adapter_class(info, expected):
    assert tile_tables.adapter_class(info) == expected


def test_gemm_tile_shrinks_for_small_layers_and_none_keeps_conv1x1():
    big = tile_tables.gemm_tile("gpu", 96 * 96, 4, 4)
    small = tile_tables.gemm_tile("gpu", 9, 32, 32)
    assert big.wg * big.bp > small.wg * small.bp and small.wg * small.bp < 2 * 9 * 2
    assert tile_tables.gemm_tile("llvmpipe", 1024, 8, 8) is None  # measured: conv1x1 wins


@pytest.mark.parametrize("storage", STORAGES)
@pytest.mark.parametrize("cin,cout,k", [(8, 13, 1), (40, 9, 1), (6, 11, 3), (32, 20, 3)])
def test_one_slice_per_invocation(monkeypatch, cin, cout, k, storage):
    """Output-slice caps per invocation (SwiftShader: conv2d 1, conv1x1 2), forced here
    at 1 for both (with conv1x1's own kernel: a GPU class's table sends 1x1 to gemm1x1)."""
    monkeypatch.setitem(tile_tables.GEMM_TILES, CLASS, None)
    monkeypatch.setitem(tile_tables.CONV1X1_SLICES, CLASS, 1)
    monkeypatch.setitem(tile_tables.CONV_SLICES, CLASS, 1)
    rng = np.random.default_rng(cin * cout)
    weights = rng.standard_normal((cout, k, k, cin)).astype(np.float32)
    bias = rng.standard_normal(cout).astype(np.float32)
    graph = single_op_graph("CONV_2D", [(1, 7, 9, cin), weights, bias], conv_attrs(act="RELU"))
    assert_matches(graph, random_feeds(graph, rng), storage=storage)
    op = graph.ops[0]
    built = select(op, graph).build(op, graph, BuildContext(adapter=CLASS))
    assert all("acc1_0" not in d.source and "a1_0" not in d.source for d in built)
