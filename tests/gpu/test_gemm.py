"""gemm1x1 (1x1 CONV_2D as a tiled GEMM, conv1x1's code path where the adapter class's
table has a tile) vs the reference interpreter, every tile mode forced on this adapter:
specialised (uniform weights), shared pipeline (geometry uniform, storage weights),
weights staged in workgroup memory; buffers and textures, fp32 and fp16."""

from __future__ import annotations

import numpy as np
import pytest

from engine.gpu.kernels import tile_tables
from engine.gpu.kernels.base import BuildContext, select
from engine.gpu.kernels.tile_tables import GemmTile, adapter_class
from tests.helpers.gpu import STORAGES, add_rich_epilogue, assert_matches, conv_attrs, gpu_context
from tests.helpers.seeds import rng_for
from tests.helpers.single_op import random_feeds, single_op_graph

ctx = gpu_context()
CLASS = adapter_class(ctx.info)
MODES = {
    "specialised": GemmTile(64, 4, 4),
    "small": GemmTile(8, 2, 1),
    "shared_pipeline": GemmTile(16, 8, 4, dims=True),
    "workgroup_memory": GemmTile(32, 4, 2, shared_k=3),
    "both": GemmTile(16, 2, 4, shared_k=2, dims=True),
    "gpu_class": tile_tables.GEMM_TILES["gpu"],  # what real GPUs run (measured on an H100)
    "storage_weights": GemmTile(64, 4, 2, shared_k=4, uniform=False),
}
CASES = [
    # (b, h, w, cin, cout, activation)
    (1, 9, 11, 5, 7, "RELU"),
    (2, 5, 3, 6, 24, "RELU6"),
    (1, 1, 1, 96, 24, "NONE"),
    (1, 1, 1, 13, 1, "TANH"),
    (1, 7, 7, 40, 9, "RELU_N1_TO_1"),
    (1, 4, 5, 5, 1, "NONE"),
]


@pytest.fixture(params=list(MODES))
def mode(request, monkeypatch):
    monkeypatch.setitem(tile_tables.GEMM_TILES, CLASS, MODES[request.param])
    return request.param


def _graph(b, h, w, cin, cout, act, rng):
    weights = rng.standard_normal((cout, 1, 1, cin)).astype(np.float32)
    bias = rng.standard_normal(cout).astype(np.float32)
    return single_op_graph("CONV_2D", [(b, h, w, cin), weights, bias], conv_attrs(act=act))


@pytest.mark.parametrize("storage", STORAGES)
@pytest.mark.parametrize("case", CASES, ids=[str(c) for c in CASES])
def test_gemm1x1(case, storage, mode):
    rng = rng_for(case)
    graph = _graph(*case, rng)
    assert select(graph.ops[0], graph).name == "conv1x1"
    engine = assert_matches(graph, random_feeds(graph, rng), storage=storage)
    assert engine.dispatch_count == 1 + 2 * (storage == "texture")
    built = select(graph.ops[0], graph).build(graph.ops[0], graph, BuildContext(adapter=CLASS))
    assert [d.kernel for d in built] == ["gemm1x1"]


@pytest.mark.parametrize("storage", STORAGES)
def test_gemm1x1_epilogue_and_scale(storage, mode):
    """Residual add, per-channel PReLU, sigmoid (padded lanes stay 0) and a fused
    squeeze-excite input scale, through the shared-pipeline flat index too."""
    rng = np.random.default_rng(9)
    graph = _graph(1, 6, 7, 8, 6, "NONE", rng)
    add_rich_epilogue(graph, rng, gate=True)
    assert_matches(graph, random_feeds(graph, rng), storage=storage)


def test_gemm1x1_shared_pipeline_is_one_source_for_many_shapes(monkeypatch):
    monkeypatch.setitem(tile_tables.GEMM_TILES, "gpu", GemmTile(16, 4, 4, dims=True))
    sources = set()
    for h, w, cin, cout in [(8, 8, 16, 32), (5, 3, 40, 12), (1, 1, 64, 64)]:
        graph = _graph(1, h, w, cin, cout, "RELU", np.random.default_rng(0))
        kernel = select(graph.ops[0], graph)
        sources |= {d.source for d in kernel.build(graph.ops[0], graph, BuildContext())}
    assert len(sources) <= 2  # the tile shrinks for the 1-pixel layer: at most one more


@pytest.mark.skipif(not ctx.has_f16, reason="adapter lacks shader-f16")
@pytest.mark.parametrize("storage", STORAGES)
@pytest.mark.parametrize("cin,cout", [(8, 13), (256, 80)])
def test_gemm1x1_fp16(cin, cout, storage, mode):
    rng = np.random.default_rng(cin + cout)
    weights = (rng.standard_normal((cout, 1, 1, cin)) / np.sqrt(cin)).astype(np.float32)
    bias = rng.standard_normal(cout).astype(np.float32)
    graph = single_op_graph("CONV_2D", [(1, 5, 6, cin), weights, bias], conv_attrs(act="RELU"))
    assert_matches(graph, random_feeds(graph, rng), precision="fp16", storage=storage)
