"""The arena's exact search (engine/memory/arena_search.py): golden vectors, plans at the
bound where one exists by construction, the exhaustive optimum on tiny instances."""

from hypothesis import given, settings
from hypothesis import strategies as st

from engine.memory import TensorUsage, arena, check_plan, lower_bound
from engine.memory.arena_search import aligned_lower_bound, search
from tests.memory.schedules import optimal_arena, random_records, tiled_records


def records(*rows):
    return [TensorUsage(k, size, first, last) for k, (size, first, last) in enumerate(rows)]


def test_search_reaches_the_bound_best_fit_misses():
    # face_detection_short_range's first ops (sizes / 64 KiB): best fit puts the largest
    # (7, ops 4-6) at 0, so tensor 2 (ops 2-4) lands on top of 0 and 1 and 3 on top of
    # it: 24. At the bound (19 live at op 4) tensor 2 is the topmost, over 0 and 1 at op 2
    # and over 3 and 4 at op 4.
    recs = records((6, 0, 2), (6, 1, 2), (6, 2, 4), (6, 3, 4), (7, 4, 6), (2, 5, 7), (2, 6, 7))
    assert arena(recs, 1, budget=0).size == 24
    plan = arena(recs, 1)
    assert plan.size == lower_bound(recs) == 19
    assert check_plan(recs, plan) == []


def test_aligned_bound_out_of_reach():
    # deeplab_v3_257_os8's tail in small: the 128 B tensors 0 and 3 must each be the
    # topmost at the peaks (ops 2, 5; else their 128 B of padding count), and both live at
    # op 3: no plan meets the bound (1152); the search finds the optimum, 1280.
    recs = records((128, 0, 3), (512, 1, 2), (512, 2, 3), (128, 3, 6), (512, 4, 5), (512, 5, 6))
    assert lower_bound(recs) == aligned_lower_bound(recs, 256) == 1152
    assert arena(recs, 256, budget=0).size == 1408
    plan = arena(recs, 256)
    assert plan.size == optimal_arena(recs, 256) == 1280
    assert check_plan(recs, plan) == []


def test_aligned_lower_bound():
    recs = records((100, 0, 1), (10, 1, 2))  # both live at op 1: 256 + 10 (or 100 + 256)
    assert lower_bound(recs) == 110
    assert aligned_lower_bound(recs, 256) == 266
    assert aligned_lower_bound(recs, 1) == 110
    assert aligned_lower_bound([], 256) == 0


@settings(max_examples=100, deadline=None)
@given(tiled_records())
def test_reaches_the_bound_when_a_plan_there_exists(case):
    recs, alignment = case
    plan = arena(recs, alignment)
    assert check_plan(recs, plan) == []
    assert plan.size == lower_bound(recs)


@settings(max_examples=60, deadline=None)
@given(random_records(max_tensors=6, extents=False), st.sampled_from([1, 4, 16]))
def test_exact_on_tiny_instances(recs, alignment):
    """Decisions complete within the budget and enough bisections: the optimum."""
    start = arena(recs, alignment, budget=0).size
    size, _, _ = search(recs, alignment, start, budget=10**6, bisections=40)
    assert size == optimal_arena(recs, alignment)


@settings(max_examples=80, deadline=None)
@given(random_records(extents=False), st.sampled_from([1, 4, 16, 256]))
def test_never_above_the_heuristic(recs, alignment):
    heuristic = arena(recs, alignment, budget=0)
    plan = arena(recs, alignment)
    assert check_plan(recs, plan) == []
    assert aligned_lower_bound(recs, alignment) <= plan.size <= heuristic.size
