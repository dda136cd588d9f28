"""memory_bench and its shaped graphs: the plans reach their targets there."""

from __future__ import annotations

import pytest

from benchmarks.engine.memory_bench import model_tables
from benchmarks.engine.memory_graphs import GRAPHS, deeplab_v3, mobilenet_v1, mobilenet_v2
from engine.memory import arena, lower_bound, texture_arena, usage_records


def _shape(graph, name):
    return next(t.shape for t in graph.tensors if t.name == name)


def test_shaped_graphs_follow_the_papers():
    v1 = mobilenet_v1()
    assert max(usage_records(v1), key=lambda r: r.size).size == 112 * 112 * 64 * 4
    assert len(v1.ops) == 1 + 2 * 13 + 4  # stem, 13 dw/pw pairs, pool, logits, reshape, softmax
    v2 = mobilenet_v2()
    convs = [op for op in v2.ops if op.type == "CONV_2D"]
    assert sum("epilogue" in op.attrs for op in convs) == 10  # residual adds
    assert v2.tensors[convs[-2].outputs[0]].shape == (1, 7, 7, 1280)
    # output stride 8 at 257: the body ends at 33x33 (dilated, not strided)
    os8 = deeplab_v3(257, 8, "mobile")
    assert os8.tensors[os8.outputs[0]].shape == (1, 257, 257, 21)
    concat = next(op for op in os8.ops if op.type == "CONCATENATION")
    assert os8.tensors[concat.outputs[0]].shape == (1, 33, 33, 512)
    os16 = deeplab_v3(513, 16, "full")
    concat = next(op for op in os16.ops if op.type == "CONCATENATION")
    assert os16.tensors[concat.outputs[0]].shape == (1, 33, 33, 1280)  # five ASPP branches


@pytest.mark.parametrize("name", GRAPHS)
def test_arena_within_2_percent_of_the_bound(name):
    """Within 2% of the lower bound (MobileNet/DeepLab shaped graphs: 1.08x before the exact search)."""
    graph = GRAPHS[name]()
    for width in (4, 2):
        records = usage_records(graph, bytes_per_element=width)
        assert arena(records, 256).size <= 1.02 * lower_bound(records)
        assert texture_arena(records).total_bytes <= 1.06 * lower_bound(records)


def test_model_tables_without_models(tmp_path):
    tables = model_tables(tmp_path, alignment=256)  # no .tflite there: the shaped graphs
    assert {r["model"] for r in tables["arena"]} == set(GRAPHS)
    assert all(r["arena"] <= r["heuristic"] for r in tables["arena"])
    assert tables["engine"] == []
