"""conv_first (CONV_2D with C_in <= 4, weights as WGSL literals) vs the reference
interpreter: the models' input layers and odd shapes, both storage kinds, fp32/fp16."""

from __future__ import annotations

import numpy as np
import pytest

from engine.gpu.kernels.base import select
from engine.gpu.kernels.conv_first import MAX_WEIGHTS, literal
from tests.helpers.gpu import STORAGES, add_input, assert_matches, conv_attrs, gpu_context
from tests.helpers.seeds import rng_for
from tests.helpers.single_op import random_feeds, single_op_graph

ctx = gpu_context()

CASES = [
    # (b, h, w, cin, cout, k, stride, padding, activation)
    (1, 32, 32, 3, 24, 5, 2, "SAME", "RELU"),  # face detection's first layer, smaller
    (1, 24, 24, 3, 16, 3, 2, "SAME", "NONE"),  # face_landmark / selfie first layers
    (1, 13, 11, 3, 7, 3, 2, "SAME", "RELU6"),  # odd sizes, channels not a multiple of 4
    (2, 9, 10, 4, 40, 3, 1, "VALID", "NONE"),  # batch 2, 10 output slices: 2 groups
    (1, 1, 1, 1, 5, 3, 1, "SAME", "TANH"),  # a 1-pixel image: every tap but one padded
    (1, 7, 8, 2, 9, 7, 3, "SAME", "RELU_N1_TO_1"),  # 7x7 stride 3
    (1, 6, 5, 3, 4, 1, 1, "VALID", "NONE"),  # 1x1 with 3 channels
    (1, 5, 9, 1, 3, 2, 2, "VALID", "NONE"),  # even kernel
]


def _graph(b, h, w, cin, cout, k, stride, padding, act, rng):
    weights = rng.standard_normal((cout, k, k, cin)).astype(np.float32)
    bias = rng.standard_normal(cout).astype(np.float32)
    attrs = conv_attrs(padding, stride, 1, act)
    return single_op_graph("CONV_2D", [(b, h, w, cin), weights, bias], attrs)


@pytest.mark.parametrize("storage", STORAGES)
@pytest.mark.parametrize("case", CASES, ids=[str(c) for c in CASES])
def test_conv_first(case, storage):
    rng = rng_for(case)
    graph = _graph(*case, rng)
    assert select(graph.ops[0], graph).name == "conv_first"
    engine = assert_matches(graph, random_feeds(graph, rng), storage=storage)
    assert engine.dispatch_count == 1 + 2 * (storage == "texture")


@pytest.mark.parametrize("storage", STORAGES)
def test_conv_first_epilogue(storage):
    """PReLU slopes and a residual add after the conv; sigmoid keeps padded lanes 0."""
    rng = np.random.default_rng(4)
    graph = _graph(1, 12, 12, 3, 6, 3, 2, "SAME", "NONE", rng)
    res = add_input(graph, "residual", (1, 6, 6, 6))
    graph.ops[0].attrs["epilogue"] = (("add", res), ("act", "LOGISTIC"))
    assert_matches(graph, random_feeds(graph, rng), storage=storage)


@pytest.mark.skipif(not ctx.has_f16, reason="adapter lacks shader-f16")
@pytest.mark.parametrize("storage", STORAGES)
@pytest.mark.parametrize("case", CASES[:4], ids=[str(c) for c in CASES[:4]])
def test_conv_first_fp16(case, storage):
    rng = np.random.default_rng(7)
    graph = _graph(*case, rng)
    assert_matches(graph, random_feeds(graph, rng), precision="fp16", storage=storage)


def test_conv_first_declines():
    rng = np.random.default_rng(2)
    five = single_op_graph("CONV_2D", [(1, 6, 6, 5), rng.standard_normal((4, 3, 3, 5)), None],
                           conv_attrs())  # fmt: skip
    dilated = single_op_graph("CONV_2D", [(1, 9, 9, 3), rng.standard_normal((4, 3, 3, 3)), None],
                              conv_attrs(dilation=2))  # fmt: skip
    n = MAX_WEIGHTS // (3 * 3 * 3) + 4
    big = single_op_graph("CONV_2D", [(1, 6, 6, 3), rng.standard_normal((n, 3, 3, 3)), None],
                          conv_attrs())  # fmt: skip
    for g in (five, dilated, big):
        assert select(g.ops[0], g).name != "conv_first"


def test_literals_round_trip_float32():
    values = np.array([0.1, -1e-7, 3.4e38, 1.0, -2.5, 1e-40], np.float32)
    for v in values:
        text = literal(v)
        assert ("." in text or "e" in text) and np.float32(float(text)) == v


@pytest.mark.parametrize("tile", [(2, 1, 8), (1, 1, 2), (1, 4, 3)])
@pytest.mark.parametrize("case", [CASES[0], CASES[2], CASES[3]], ids=str)
def test_conv_first_tiles(monkeypatch, tile, case):
    """Every class's tile (SwiftShader 2x1) and small slice groups (several switch cases)."""
    from engine.gpu.kernels import tile_tables

    monkeypatch.setitem(
        tile_tables.FIRST_TILES, tile_tables.adapter_class(ctx.info), tile_tables.FirstTile(*tile)
    )
    rng = np.random.default_rng(5)
    graph = _graph(*case, rng)
    assert_matches(graph, random_feeds(graph, rng))
