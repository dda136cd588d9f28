"""Builder: NAS-Bench-101's channel rules, and built files against LiteRT (and the engine)."""

from __future__ import annotations

import numpy as np
import pytest

from engine.latency import space
from engine.latency.builder import NetConfig, build_graph, build_tflite, vertex_channels
from engine.latency.cell import CONV1X1, CONV3X3, INPUT, MAXPOOL3X3, OUTPUT, Cell
from engine.latency.measure import random_feeds
from engine.model.importer import load_tflite

IN, OUT, C3, C1, MP = INPUT, OUTPUT, CONV3X3, CONV1X1, MAXPOOL3X3
# input -> 1 -> {2, 3} -> output: vertex 1 takes the larger of its readers' channels, so
# vertex 3 (one channel fewer) reads it through a truncating SLICE
FORK = Cell.make(
    [[0, 1, 0, 0, 0],
     [0, 0, 1, 1, 0],
     [0, 0, 0, 0, 1],
     [0, 0, 0, 0, 1],
     [0, 0, 0, 0, 0]],
    [IN, C3, C1, MP, OUT],
)  # fmt: skip
TINY = NetConfig(input_size=8, stem_channels=5, num_stacks=2, num_classes=3)


def test_vertex_channels_split_the_output_and_take_the_max_backwards():
    assert vertex_channels(16, 17, FORK.matrix) == [16, 9, 9, 8, 17]
    diamond = [[0, 1, 1, 0], [0, 0, 0, 1], [0, 0, 0, 1], [0, 0, 0, 0]]
    assert vertex_channels(3, 16, diamond) == [3, 8, 8, 16]
    assert vertex_channels(3, 16, [[0, 1], [0, 0]]) == [3, 16]


def test_truncation_is_a_slice_and_input_edges_are_projections():
    g = build_graph(FORK, NetConfig(stem_channels=17, num_stacks=1))
    types = [op.type for op in g.ops]
    assert types.count("SLICE") == 1
    assert types.count("CONCATENATION") == 1
    skip = Cell.make([[0, 1, 1], [0, 0, 1], [0, 0, 0]], [IN, MP, OUT])
    g = build_graph(skip, NetConfig(num_stacks=1))
    # stem, projection into vertex 1, maxpool, projection of input to output, ADD
    assert [op.type for op in g.ops][:5] == ["CONV_2D", "CONV_2D", "MAX_POOL_2D", "CONV_2D", "ADD"]


def test_parameters_match_nasbench101():
    """NAS-Bench-101 reports 2,694,282 trainable parameters for this cell in its own
    network (stem 128, 3 stacks of 3 cells, 10 labels; convolutions without bias, batch
    norm gamma and beta): our folded graph has weights + 1 bias per channel, so add one."""
    cell = Cell.make(
        [[0, 1, 1, 1, 1, 0, 0],
         [0, 0, 0, 0, 0, 0, 1],
         [0, 0, 0, 0, 0, 0, 1],
         [0, 0, 0, 0, 0, 0, 1],
         [0, 0, 0, 0, 0, 1, 0],
         [0, 0, 0, 0, 0, 0, 1],
         [0, 0, 0, 0, 0, 0, 0]],
        [IN, C3, C1, MP, C3, C3, OUT],
    )  # fmt: skip
    g = build_graph(cell, NetConfig(stem_channels=128, cells_per_stack=3))
    n = 0
    for op in g.ops:
        if op.type in ("CONV_2D", "FULLY_CONNECTED"):
            w, b = g.tensors[op.inputs[1]], g.tensors[op.inputs[2]]
            n += w.size + b.size + (b.size if op.type == "CONV_2D" else 0)
    assert n == 2_694_282


def _cells():
    return [FORK, *space.sample_cells(3, seed=11)]


def _litert(path, feeds):
    from engine.reference.oracle import run_litert

    return run_litert(path, feeds)


@pytest.mark.parametrize("index", range(4))
def test_built_files_load_in_litert_and_match_the_reference(tmp_path, index):
    pytest.importorskip("ai_edge_litert")
    from engine.reference import Interpreter

    path = tmp_path / "cell.tflite"
    path.write_bytes(build_tflite(_cells()[index], TINY))
    graph = load_tflite(path)
    feeds = random_feeds(graph)
    want = _litert(path, feeds)
    got = Interpreter(graph).run(feeds)
    for name, ref in want.items():
        assert got[name].shape == ref.shape
        np.testing.assert_allclose(got[name], ref, rtol=1e-4, atol=1e-4 * np.abs(ref).max())


@pytest.mark.gpu
@pytest.mark.parametrize("index", range(4))
def test_engine_runs_built_files_like_litert(tmp_path, index):
    pytest.importorskip("ai_edge_litert")
    from tests.helpers.gpu import gpu_context

    ctx = gpu_context()
    from engine.gpu.engine import Engine

    path = tmp_path / "cell.tflite"
    path.write_bytes(build_tflite(_cells()[index], TINY))
    graph = load_tflite(path)
    feeds = random_feeds(graph)
    want = _litert(path, feeds)
    got = Engine(graph, context=ctx).run(feeds)
    for name, ref in want.items():
        np.testing.assert_allclose(got[name], ref, rtol=1e-4, atol=1e-4 * np.abs(ref).max())
