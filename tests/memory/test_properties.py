"""Every strategy on random schedules: valid plans, never below the lower bound."""

from hypothesis import given, settings
from hypothesis import strategies as st

from engine.memory import check_plan, lower_bound, mincostflow, plan_all, usage_records
from tests.memory.schedules import optimal_objects, random_graphs, random_records

ALIGNMENTS = st.sampled_from([1, 4, 16, 256])


def check_all(records, alignment):
    stats = {s.strategy: s for s in plan_all(records, alignment)}
    for s in stats.values():
        assert check_plan(records, s.plan) == [], s.strategy
        assert s.total_bytes >= s.lower_bound, s.strategy
        assert s.objects <= len(records)
    for name in ("greedy", "mincostflow", "greedy_by_size"):
        assert stats[name].total_bytes <= stats["naive"].total_bytes, name
    for name in ("texture_greedy", "texture_greedy_by_size", "texture_arena"):
        if name in stats:
            assert stats[name].total_bytes <= stats["texture_naive"].total_bytes, name
    return stats


@settings(max_examples=80, deadline=None)
@given(random_graphs(), st.sampled_from([2, 4]), ALIGNMENTS)
def test_strategies_on_random_graphs(graph, bytes_per_element, alignment):
    records = usage_records(graph, bytes_per_element)
    stats = check_all(records, alignment)
    assert "texture_greedy" in stats  # graph records always carry extents


@settings(max_examples=80, deadline=None)
@given(random_records(), ALIGNMENTS)
def test_strategies_on_random_records(records, alignment):
    check_all(records, alignment)


@settings(max_examples=40, deadline=None)
@given(random_records(max_tensors=40, extents=False))
def test_mincostflow_with_every_edge_is_valid(records):
    plan = mincostflow(records, nearest=None)
    assert check_plan(records, plan) == []
    assert plan.total_bytes <= sum(r.size for r in records)


@settings(max_examples=60, deadline=None)
@given(random_records(max_tensors=7, extents=False))
def test_object_strategies_never_beat_the_exhaustive_optimum(records):
    best = optimal_objects(records)
    assert lower_bound(records) <= best
    for s in plan_all(records, names=["greedy", "greedy_by_size", "mincostflow"]):
        assert s.total_bytes >= best, s.strategy
