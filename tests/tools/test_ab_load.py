"""Interleaved A/B and the quiet-machine gate: structure and arithmetic, no timing asserts."""

from __future__ import annotations

import numpy as np
import pytest

from engine.tools.bench import ab, load, timing
from engine.tools.bench.load import LoadGate


def test_interleave_alternates_order_and_counts_runs():
    calls: list[str] = []
    runs = {"a": lambda: calls.append("a") or {"y": np.ones(3)},
            "b": lambda: calls.append("b") or {"y": np.ones(3)}}  # fmt: skip
    res = ab.interleave(runs, rounds=3, block=2)
    assert calls == ["a", "a", "b", "b", "b", "b", "a", "a", "a", "a", "b", "b"]
    assert set(res["medians"]) == {"a", "b"} and len(res["round_medians"]["a"]) == 3
    assert res["outputs"]["a"]["y"].shape == (3,)


def test_interleave_warms_each_contender_up_untimed():
    calls: list[str] = []
    runs = {"a": lambda: calls.append("a"), "b": lambda: calls.append("b")}
    res = ab.interleave(runs, rounds=2, block=1, warmup=2)
    assert calls == ["a", "a", "b", "b", "a", "b", "b", "a"]
    assert len(res["round_medians"]["a"]) == 2


def test_alternating_reverses_the_order_every_other_round():
    got = list(ab.alternating(("x", "y", "z"), 3))
    assert got == [(0, "x"), (0, "y"), (0, "z"), (1, "z"), (1, "y"), (1, "x"),
                   (2, "x"), (2, "y"), (2, "z")]  # fmt: skip
    assert list(ab.alternating({"k": 1}, 2)) == [(0, "k"), (1, "k")]  # a dict: its keys


def test_timed_returns_the_result_and_its_wall_ms():
    out, ms = timing.timed(lambda: 42)
    assert out == 42 and ms >= 0.0


def test_match_outputs_by_name_then_by_position():
    ref = {"scores": np.array([1.0, 2.0]), "boxes": np.zeros(4)}
    assert ab.match_outputs(ref, {"scores": np.array([1.0, 2.5]), "boxes": np.zeros(4)}) == 0.25
    renamed = {"Identity": np.array([1.0, 2.0]), "Identity_1": np.full(4, 0.5)}
    assert ab.match_outputs(ref, renamed) == 0.5
    assert ab.match_outputs(ref, {"x": np.zeros(7), "z": np.zeros(1)}) is None


def test_ab_rows_ratio_is_peer_over_engine():
    eng = {"_run": lambda: {"o": np.zeros(2)}, "init_ms": 5.0}
    peer = {"backend": "litert-gpu", "_run": lambda: {"o": np.zeros(2)}, "init_ms": 2.0}
    skipped = {"backend": "litert-xnnpack", "status": "failed"}  # no _run: no A/B row
    (row,) = ab.ab_rows(eng, [peer, skipped], rounds=2, block=1)
    assert row["peer"] == "litert-gpu" and row["max_error"] == 0.0
    assert np.isclose(row["ratio"], row["peer_median_ms"] / row["engine_median_ms"])
    assert row["engine_init_ms"] == 5.0 and row["peer_init_ms"] == 2.0
    assert row["ratio_rounds"][0] <= row["ratio_rounds"][1] <= row["ratio_rounds"][2]


def test_load_gate_marks_busy_per_cpu(monkeypatch):
    monkeypatch.setattr(load, "usable_cpus", lambda: 2)
    monkeypatch.setattr(load, "load_average", lambda: (1.5, 1.0, 0.5))
    gate = LoadGate.check(max_per_cpu=0.5)
    assert gate.busy and gate.per_cpu == 0.75 and "busy" in gate.label()
    assert not LoadGate.check(max_per_cpu=1.0).busy
    after = gate.after().as_dict()
    assert after["load_after"] == (1.5, 1.0, 0.5) and after["cpus"] == 2 and after["busy"]


@pytest.mark.gpu
def test_require_quiet_refuses_on_a_busy_machine(monkeypatch, capsys):

    from engine.tools import bench_cli
    from tests.helpers.gpu import gpu_context

    gpu_context()  # the gate is checked once the adapter is known
    monkeypatch.setattr(load, "load_average", lambda: (64.0, 64.0, 64.0))
    rc = bench_cli.main(["--op", "conv1x1", "--shape", "4x4x4", "--require-quiet"])
    assert rc == 3 and "busy" in capsys.readouterr().err
