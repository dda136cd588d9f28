import pytest
from hypothesis import given, settings

from engine.memory import TensorUsage, lower_bound, usage_records
from tests.helpers.memory import small_graph
from tests.memory.schedules import random_graphs, random_records


def test_usage_records_small_graph():
    records = usage_records(small_graph())
    got = [(r.name, r.size, r.first, r.last, r.extent) for r in records]
    assert got == [
        ("a", 8 * 8 * 4 * 4, 0, 2, (8, 8, 1)),
        ("b", 8 * 8 * 4 * 4, 1, 2, (8, 8, 1)),
        ("d", 8 * 8 * 4, 1, 1, (8, 1, 2)),  # [8, 5] -> (1, 1, 8, 5): 2 slices
        ("c", 8 * 8 * 4 * 4, 2, 3, (8, 8, 1)),
    ]
    assert [r.tensor for r in records] == [2, 3, 4, 5]  # no input, constant or output


def test_usage_records_fp16_halves_sizes():
    full, half = usage_records(small_graph(), 4), usage_records(small_graph(), 2)
    assert [r.size for r in half] == [r.size // 2 for r in full]
    assert {r.texel_bytes for r in half} == {8}


def test_bad_records_are_rejected():
    with pytest.raises(ValueError):
        TensorUsage(0, 16, 3, 2)
    with pytest.raises(ValueError):
        TensorUsage(0, 20, 0, 1, (1, 1, 1 + 2))  # 20 B is no multiple of 3 texels


@settings(max_examples=60, deadline=None)
@given(random_graphs())
def test_usage_records_on_random_graphs(graph):
    records = usage_records(graph)
    excluded = set(graph.inputs) | set(graph.outputs)
    readers = graph.consumers()
    for r in records:
        assert r.tensor not in excluded and not graph.tensors[r.tensor].is_constant
        assert r.first == graph.producers()[r.tensor]
        assert r.last == max(readers.get(r.tensor, [r.first]))
    expected = {t for op in graph.ops for t in op.outputs} - excluded
    assert {r.tensor for r in records} == expected


@settings(max_examples=60, deadline=None)
@given(random_records())
def test_lower_bound_is_max_live_bytes(records):
    steps = range(max((r.last for r in records), default=-1) + 1)
    live = [sum(r.size for r in records if r.first <= s <= r.last) for s in steps]
    assert lower_bound(records) == max(live, default=0)
