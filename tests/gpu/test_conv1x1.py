"""The 1x1 CONV_2D specialisation (conv1x1's own kernel) vs the reference interpreter.

GPU classes' tile table sends 1x1 convs to gemm1x1 (tests/gpu/test_gemm.py); here the
table's row for this adapter's class is None, so conv1x1's own kernel (and its weight
splits) is what runs on whatever adapter runs these tests (an H100 found the split
checks running gemm1x1 instead)."""

from __future__ import annotations

import numpy as np
import pytest

from engine.gpu.kernels import tile_tables
from engine.gpu.kernels.base import BuildContext, select
from tests.helpers.gpu import (
    STORAGES,
    add_input,
    add_rich_epilogue,
    assert_matches,
    conv_attrs,
    gpu_context,
)
from tests.helpers.seeds import rng_for
from tests.helpers.single_op import random_feeds, single_op_graph

ctx = gpu_context()


@pytest.fixture(autouse=True)
def conv1x1_kernel_here(monkeypatch):
    monkeypatch.setitem(tile_tables.GEMM_TILES, tile_tables.adapter_class(ctx.info), None)


CASES = [
    # (b, h, w, cin, cout, padding, activation)
    (1, 9, 11, 5, 7, "SAME", "RELU"),
    (1, 16, 16, 8, 13, "VALID", "NONE"),
    (2, 5, 3, 6, 24, "SAME", "RELU6"),  # C_in <= 4 goes to conv_first
    (1, 1, 1, 96, 24, "VALID", "NONE"),  # squeeze-excite style
    (1, 1, 1, 13, 1, "VALID", "TANH"),
    (1, 7, 7, 40, 9, "SAME", "RELU_N1_TO_1"),  # 10 input slices: reduction loop
    (1, 4, 5, 5, 1, "VALID", "NONE"),
    (1, 3, 3, 12, 12, "SAME", "NONE"),
]


def _graph(b, h, w, cin, cout, padding, act, rng, bias=True):
    weights = rng.standard_normal((cout, 1, 1, cin)).astype(np.float32)
    b_ = rng.standard_normal(cout).astype(np.float32) if bias else None
    return single_op_graph("CONV_2D", [(b, h, w, cin), weights, b_], conv_attrs(padding, act=act))


@pytest.mark.parametrize("storage", STORAGES)
@pytest.mark.parametrize("case", CASES, ids=[str(c) for c in CASES])
def test_conv1x1(case, storage):
    rng = rng_for(case)
    graph = _graph(*case, rng)
    assert select(graph.ops[0], graph).name == "conv1x1"
    engine = assert_matches(graph, random_feeds(graph, rng), storage=storage)
    assert engine.stats.submits == 1 and not engine.fallback_ops


def test_conv1x1_no_bias():
    rng = np.random.default_rng(1)
    graph = _graph(1, 6, 5, 7, 6, "SAME", "NONE", rng, bias=False)
    assert_matches(graph, random_feeds(graph, rng))


def test_conv1x1_declines_what_it_cannot_run():
    rng = np.random.default_rng(2)
    w1 = rng.standard_normal((4, 1, 1, 4)).astype(np.float32)
    strided = single_op_graph("CONV_2D", [(1, 6, 6, 4), w1, None], conv_attrs(stride=2))
    grouped = single_op_graph("CONV_2D", [(1, 6, 6, 8), w1, None], conv_attrs())
    w3 = rng.standard_normal((4, 3, 3, 4)).astype(np.float32)
    k3 = single_op_graph("CONV_2D", [(1, 6, 6, 4), w3, None], conv_attrs())
    for g in (strided, grouped, k3):
        kernel = select(g.ops[0], g)  # None: no GPU kernel (grouped convs run on the CPU)
        assert kernel is None or kernel.name != "conv1x1"


@pytest.mark.parametrize("storage", STORAGES)
def test_conv1x1_large_weights_split_into_uniform_blocks(storage):
    """672 -> 112: 168 x 28 mat4x4 = 294 KB, five uniform blocks sharing one pipeline;
    with a residual add in the epilogue (its binding follows the split's slice range)."""
    rng = np.random.default_rng(3)
    weights = (rng.standard_normal((112, 1, 1, 672)) * 0.05).astype(np.float32)
    graph = single_op_graph("CONV_2D", [(1, 3, 3, 672), weights, None], conv_attrs(act="RELU6"))
    residual = add_input(graph, "residual", (1, 3, 3, 112))
    graph.ops[0].attrs["epilogue"] = (("add", residual),)
    engine = assert_matches(graph, random_feeds(graph, rng), storage=storage)
    assert engine.dispatch_count == 5 + 3 * (storage == "texture")  # + the wrappers
    here = BuildContext(adapter=tile_tables.adapter_class(ctx.info))
    dispatches = select(graph.ops[0], graph).build(graph.ops[0], graph, here)
    assert len(dispatches) == 5 and len({d.source for d in dispatches}) == 1


def test_conv1x1_huge_input_uses_storage_weights():
    """4100 input channels: one output slice's weights exceed 64 KiB -> storage buffer."""
    rng = np.random.default_rng(4)
    weights = (rng.standard_normal((6, 1, 1, 4100)) * 0.02).astype(np.float32)
    graph = single_op_graph("CONV_2D", [(1, 2, 3, 4100), weights, None], conv_attrs())
    engine = assert_matches(graph, random_feeds(graph, rng))
    assert engine.dispatch_count == 1


@pytest.mark.parametrize("storage", STORAGES)
def test_conv1x1_epilogue_residual_prelu_and_logistic(storage):
    """Transform epilogues: residual add, per-channel PReLU, sigmoid; padded lanes stay 0."""
    rng = np.random.default_rng(9)
    graph = _graph(1, 6, 7, 8, 6, "SAME", "NONE", rng)
    add_rich_epilogue(graph, rng)
    assert_matches(graph, random_feeds(graph, rng), storage=storage)  # + padded lanes


@pytest.mark.skipif(not ctx.has_f16, reason="adapter lacks shader-f16")
@pytest.mark.parametrize("storage", STORAGES)
@pytest.mark.parametrize("cin,cout", [(8, 13), (40, 9), (256, 80)])  # 256 -> 80: split
def test_conv1x1_fp16(cin, cout, storage):
    rng = np.random.default_rng(cin + cout)
    weights = (rng.standard_normal((cout, 1, 1, cin)) / np.sqrt(cin)).astype(np.float32)
    bias = rng.standard_normal(cout).astype(np.float32)
    graph = single_op_graph("CONV_2D", [(1, 5, 6, cin), weights, bias], conv_attrs(act="RELU"))
    engine = assert_matches(graph, random_feeds(graph, rng), precision="fp16", storage=storage)
    assert engine.dispatch_count == (2 if cin == 256 else 1) + 2 * (storage == "texture")
