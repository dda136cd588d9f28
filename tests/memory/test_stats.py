import dataclasses

import pytest

from engine.memory import (
    BUFFER_STRATEGIES,
    STRATEGIES,
    TEXTURE_STRATEGIES,
    ArenaPlan,
    ObjectPlan,
    TensorUsage,
    TexturePlan,
    best_plan,
    check_plan,
    format_table,
    plan_all,
    plan_with,
    usage_records,
)
from tests.helpers.memory import small_graph

RECORDS = [TensorUsage(0, 100, 0, 1), TensorUsage(1, 10, 2, 4), TensorUsage(2, 100, 3, 4)]


def test_registry_names():
    assert {"naive", "greedy", "greedy_by_size", "mincostflow", "arena"} <= set(BUFFER_STRATEGIES)
    assert {"texture_naive", "texture_greedy", "texture_greedy_by_size"} <= set(TEXTURE_STRATEGIES)
    assert set(STRATEGIES) == set(BUFFER_STRATEGIES) | set(TEXTURE_STRATEGIES)


def test_stats_fields():
    stats = plan_with("greedy", RECORDS)
    got = (stats.total_bytes, stats.naive_bytes, stats.lower_bound, stats.objects)
    assert got == (200, 210, 110, 2)
    assert stats.ratio == pytest.approx(200 / 110)
    assert stats.time_ms >= 0
    with pytest.raises(dataclasses.FrozenInstanceError):
        stats.total_bytes = 0


def test_plan_all_skips_textures_without_extents():
    assert [s.strategy for s in plan_all(RECORDS)] == list(BUFFER_STRATEGIES)
    names = [s.strategy for s in plan_all(usage_records(small_graph()))]
    assert names == list(STRATEGIES)


def test_best_plan_is_the_smallest():
    best = best_plan(RECORDS, alignment=4)
    assert best.total_bytes == min(s.total_bytes for s in plan_all(RECORDS, alignment=4))
    assert (best.strategy, best.total_bytes) == ("arena", 110)  # ties at 110: fewest objects
    assert best_plan(RECORDS).strategy in ("greedy_by_size", "mincostflow")  # 256 pads the arena
    texture = best_plan(usage_records(small_graph()), storage="texture")
    assert texture.strategy.startswith("texture_")


def test_unknown_names_are_errors():
    with pytest.raises(ValueError, match="unknown memory strategy"):
        plan_with("best", RECORDS)
    with pytest.raises(ValueError, match="storage"):
        best_plan(RECORDS, storage="heap")


def test_empty_records():
    for s in plan_all([]):
        assert (s.total_bytes, s.objects, s.ratio) == (0, 0, 1.0)
        assert check_plan([], s.plan) == []


def test_format_table():
    lines = format_table(plan_all(RECORDS)).splitlines()
    assert lines[0] == "| strategy | total | objects | lower bound | naive | / bound | ms |"
    assert len(lines) == 2 + len(BUFFER_STRATEGIES)
    assert lines[5].startswith("| mincostflow | 110 B | 2 | 110 B | 210 B | 1.000 |")


def test_format_table_from_dicts_with_extra_keys():
    rows = [{"precision": "fp16", **s.as_dict()} for s in plan_all(RECORDS)]
    assert "plan" not in rows[0]
    lines = format_table(rows).splitlines()
    assert lines[0].startswith("| precision | strategy |")
    assert lines[1].startswith("|---|---|---:|")
    assert lines[2].startswith("| fp16 | naive | 210 B |")
    assert format_table([]) == "(no plans)"


def test_check_plan_finds_problems():
    shared = ObjectPlan("bad", {0: 0, 1: 0, 2: 0}, (100,))
    assert any("overlap in time" in e for e in check_plan(RECORDS, shared))
    small = ObjectPlan("bad", {0: 0, 1: 1, 2: 0}, (50, 10))
    assert any("> object 0" in e for e in check_plan(RECORDS, small))
    missing = ObjectPlan("bad", {0: 0, 1: 1}, (100, 10))
    assert any("misses tensors [2]" in e for e in check_plan(RECORDS, missing))
    clash = ArenaPlan("bad", {0: 0, 1: 50, 2: 0}, 150, 1)
    assert any("share bytes" in e for e in check_plan(RECORDS, clash))
    unaligned = ArenaPlan("bad", {0: 0, 1: 100, 2: 0}, 110, 64)
    assert any("not a multiple" in e for e in check_plan(RECORDS, unaligned))
    short = ArenaPlan("bad", {0: 0, 1: 100, 2: 0}, 100, 1)
    assert any("past 100" in e for e in check_plan(RECORDS, short))
    textures = [TensorUsage(0, 4 * 16, 0, 1, (2, 2, 1)), TensorUsage(1, 4 * 16, 2, 3, (4, 1, 1))]
    narrow = TexturePlan("bad", {0: 0, 1: 0}, ((2, 2, 1),), 16)
    assert any("extent (4, 1, 1)" in e for e in check_plan(textures, narrow))
    assert check_plan(textures, TexturePlan("ok", {0: 0, 1: 0}, ((4, 2, 1),), 16)) == []
