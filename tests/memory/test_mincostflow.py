"""The flow solver against brute force, and the edge pruning."""

from hypothesis import given, settings

from engine.memory.mincostflow import NEAREST, reuse_chains, reuse_pairs
from tests.memory.schedules import optimal_flow_cost, random_records


def flow_cost(records, previous) -> int:
    return sum(
        max(0, r.size - records[previous[j]].size) if j in previous else r.size
        for j, r in enumerate(records)
    )


@settings(max_examples=60, deadline=None)
@given(random_records(max_tensors=7, extents=False))
def test_solver_reaches_the_flow_optimum(records):
    previous = reuse_chains(records, nearest=None)
    for j, i in previous.items():
        assert records[i].last < records[j].first
    assert len(set(previous.values())) == len(previous)  # each object handed on once
    assert flow_cost(records, previous) == optimal_flow_cost(records)


@settings(max_examples=40, deadline=None)
@given(random_records(max_tensors=NEAREST, extents=False))
def test_pruning_keeps_every_edge_on_small_inputs(records):
    assert sorted(reuse_pairs(records, NEAREST)) == sorted(reuse_pairs(records, None))


@settings(max_examples=40, deadline=None)
@given(random_records(max_tensors=40, extents=False))
def test_pruned_edges_are_a_subset(records):
    pruned, full = reuse_pairs(records, 2), set(reuse_pairs(records, None))
    assert set(pruned) <= full
    ends = {j: {i for i, jj in full if jj == j} for _, j in full}
    for j, preds in ends.items():  # every tensor with a predecessor keeps at least one
        assert any(jj == j for _, jj in pruned) or not preds
