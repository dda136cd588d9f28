"""conv1x1 with quad-shared weights (tile_tables.QUAD_WEIGHTS), forced on this adapter, vs
LiteRT: partial pixel blocks, quads wholly past the last pixel, several slice blocks per
work group, split layers, groups too narrow for quads; both storages and precisions.
A quad that is not 4 consecutive local indices mixes columns and fails the tolerance."""

from __future__ import annotations

import re

import numpy as np
import pytest

from engine.gpu.engine import Engine
from engine.gpu.kernels import tile_tables
from engine.precision import precision as precision_of
from tests.helpers.gpu import STORAGES, conv_attrs, gpu_context, texture_wrapped
from tests.helpers.single_op import max_error, random_feeds, run_litert, single_op_graph

ctx = gpu_context()
CLASS = tile_tables.adapter_class(ctx.info)
pytestmark = pytest.mark.skipif(not ctx.has_subgroups, reason=f"{ctx.name}: no subgroups")


@pytest.fixture
def quads_here(monkeypatch):
    """Quads on this adapter's class, with conv1x1's own kernel (not the GEMM that GPU
    classes use), so that the lane mapping is checked on whatever adapter runs this."""
    monkeypatch.setattr(tile_tables, "QUAD_WEIGHTS", frozenset({CLASS}))
    monkeypatch.setitem(tile_tables.GEMM_TILES, CLASS, None)


@pytest.mark.parametrize("storage", STORAGES)
@pytest.mark.parametrize("precision", ["fp32", "fp16"])
@pytest.mark.parametrize(
    "h, w, cin, cout, quads",
    [
        (16, 16, 16, 32, True),
        (7, 9, 40, 12, True),  # 63 pixels: the last invocation's block is partial
        (5, 13, 16, 16, True),  # 7 invocations wholly past the last pixel
        (5, 17, 24, 24, True),  # (16, 1, 2) groups: quads in two slice blocks per group
        (8, 8, 256, 128, True),  # 256 KiB of weights: split dispatches sharing a pipeline
        (3, 5, 8, 72, False),  # (2, 1, 8) groups: too narrow for quads
    ],
    ids=["even", "partial-block", "past-the-end", "slices-in-z", "split-layer", "narrow"],
)
def test_quad_weights_match_litert(quads_here, h, w, cin, cout, quads, precision, storage):
    if precision == "fp16" and not ctx.has_f16:
        pytest.skip(f"{ctx.name}: no shader-f16")
    rng = np.random.default_rng(h * w + cin * cout)
    # weights ~ N(0, 1/cin), as in trained nets: outputs of the same size at every depth
    weights = (rng.standard_normal((cout, 1, 1, cin)) / np.sqrt(cin)).astype(np.float32)
    bias = rng.standard_normal(cout).astype(np.float32)
    graph = single_op_graph("CONV_2D", [(1, h, w, cin), weights, bias], conv_attrs(act="RELU6"))
    feeds = random_feeds(graph, rng, scale=2.0)
    want = run_litert(graph, feeds)
    engine = Engine(texture_wrapped(graph) if storage == "texture" else graph,
                    precision=precision, storage=storage)  # fmt: skip
    got = engine.run(feeds)
    err = max(max_error(want[k], got[k]) for k in want)
    assert err <= precision_of(precision).tolerance, err
    # a quad spans 4 invocations of one row of pixels: only work groups 4k wide use it
    if CLASS == "llvmpipe":  # the shapes above were picked for lavapipe's work groups
        sources = [d.source for d in engine.program.dispatches]
        assert any("quadBroadcast(wq" in s for s in sources) == quads
    for d in engine.program.dispatches:
        if d.kernel == "conv1x1":
            width = int(re.search(r"@workgroup_size\((\d+),", d.source).group(1))
            assert ("quadBroadcast(wq" in d.source) == (width % 4 == 0), width


def test_quads_only_where_the_table_says():
    graph = single_op_graph("CONV_2D", [(1, 16, 16, 16), np.ones((32, 1, 1, 16), np.float32),
                                        np.zeros(32, np.float32)], conv_attrs())  # fmt: skip
    sources = [d.source for d in Engine(graph).program.dispatches]
    assert any("quadBroadcast(wq" in s for s in sources) == tile_tables.quad_weights(CLASS)
