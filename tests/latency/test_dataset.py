"""Dataset rows: appended in gzip members, read back typed; keys for resuming."""

from __future__ import annotations

import gzip

import pytest

from engine.latency.dataset import DatasetError, append_rows, read_rows, row_key
from engine.latency.measure import Protocol, timed


def test_rows_round_trip_across_appends(tmp_path):
    path = tmp_path / "d.csv.gz"
    row = {"hash": "ab", "sample": "uniform", "config": {"b": 1, "a": 2}, "ops": ["input"],
           "flops": 10, "engine_mean_ms": 1.5, "dispatch_ms": [None, 0.1], "precision": "fp32"}  # fmt: skip
    append_rows(path, [row])
    append_rows(path, [dict(row, hash="cd")])
    rows = read_rows(path)
    assert [r["hash"] for r in rows] == ["ab", "cd"]
    assert rows[0]["config"] == {"b": 1, "a": 2} and rows[0]["flops"] == 10
    assert rows[0]["dispatch_ms"] == [None, 0.1] and rows[0]["litert_mean_ms"] is None
    assert row_key(rows[0]) == ("ab", '{"a":2,"b":1}', "fp32")
    with gzip.open(path, "rt") as f:
        assert f.read().count("hash,") == 1  # one header


def test_missing_dataset_names_the_fix(tmp_path):
    with pytest.raises(DatasetError, match="engine-latency measure"):
        read_rows(tmp_path / "none.csv.gz")


def test_protocol_restarts_while_noisy(monkeypatch):
    """A fake clock: each call of fn takes the next scripted duration (seconds)."""
    from engine.latency import measure

    durations = iter([1, 1, 5, 1, 1] + [2, 2, 2, 2, 2] + [9] * 10)
    clock = {"now": 0.0}
    monkeypatch.setattr(measure.time, "perf_counter", lambda: clock["now"])

    def fn():
        clock["now"] += next(durations)

    t = timed(fn, Protocol(warmup=0, runs=5, max_std=0.10, restarts=3))
    assert (t.restarts, t.mean_ms, t.median_ms, t.std_ms) == (1, 2000.0, 2000.0, 0.0)
    noisy = iter([1, 5] * 20)
    monkeypatch.setattr(measure.time, "perf_counter", lambda: clock["now"])

    def fn2():
        clock["now"] += next(noisy)

    t = timed(fn2, Protocol(warmup=0, runs=4, max_std=0.10, restarts=2))
    assert t.restarts == 2  # gave up after the allowed restarts, last attempt kept


def test_rows_are_not_appended_under_another_header(tmp_path):
    path = tmp_path / "old.csv.gz"
    with gzip.open(path, "wt") as f:
        f.write("hash,engine_mean_ms\nab,1.0\n")  # a dataset of older columns
    with pytest.raises(DatasetError, match="older columns"):
        append_rows(path, [{"hash": "cd"}])
