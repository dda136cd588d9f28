"""The round-robin protocol's order and statistics, and the repeat agreement per statistic."""

from __future__ import annotations

import pytest

from engine.latency.measure import Protocol, round_robin, summary, timed_round_robin
from engine.latency.repeat import agreement, best, markdown


def test_round_robin_visits_every_cell_once_per_round():
    assert round_robin(3, 2) == [0, 1, 2, 0, 1, 2]
    assert round_robin(1, 3) == [0, 0, 0]


def test_timed_round_robin_calls_in_rounds_after_warmup():
    calls: list[str] = []
    fns = [lambda n=n: calls.append(n) for n in "ABC"]
    times = timed_round_robin(fns, Protocol(warmup=1, runs=4, block=2))
    assert "".join(calls) == "ABC" + "AAA" + "BBB" + "CCC" + "AAA" + "BBB" + "CCC"
    assert [len(t) for t in times] == [4, 4, 4]  # each visit: 1 untimed + block timed


def test_timed_round_robin_last_round_is_partial():
    calls: list[str] = []
    times = timed_round_robin([lambda: calls.append("A")], Protocol(warmup=0, runs=3, block=2))
    assert len(times[0]) == 3 and len(calls) == 2 * 2 + 1  # visits: 1+2, 1+1


def test_summary_keeps_min_p10_median_mean():
    s = summary([float(x) for x in range(1, 11)])  # 1..10 ms
    assert s["engine_min_ms"] == 1.0
    assert s["engine_p10_ms"] == pytest.approx(1.9)  # linear interpolation
    assert s["engine_median_ms"] == 5.5 and s["engine_mean_ms"] == 5.5


def _row(h: str, **stats) -> dict:
    return {"hash": h, "precision": "fp32", **{f"engine_{k}_ms": v for k, v in stats.items()}}


def test_agreement_per_statistic_and_tolerance():
    first = [_row("a", min=10.0, median=10.0), _row("b", min=10.0, median=10.0),
             _row("c", min=10.0, median=10.0), _row("d", min=10.0, median=10.0)]  # fmt: skip
    second = [_row("a", min=10.4, median=10.0),  # min within 5%
              _row("b", min=10.8, median=9.6),  # min within 10% only; median within 5%
              _row("c", min=12.0, median=10.9),  # min outside; median within 10% only
              _row("d", min=10.0, median=None),  # median not measured: not counted
              _row("x", min=10.0, median=10.0)]  # not in the first: not counted  # fmt: skip
    got = agreement(first, second, stats=("min", "median"))
    assert got["min"] == {"n": 4, "acc5": 0.5, "acc10": 0.75}
    assert got["median"] == {"n": 3, "acc5": 2 / 3, "acc10": 1.0}
    assert best(got) == "median"
    assert "| min | 4 | 50.0% | 75.0% |" in markdown(got)


def test_best_breaks_ties_on_the_tighter_tolerance():
    agree = {"min": {"n": 2, "acc5": 0.5, "acc10": 1.0}, "p10": {"n": 2, "acc5": 1.0, "acc10": 1.0}}
    assert best(agree) == "p10"
