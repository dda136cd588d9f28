"""The host's fixed cost: its microbenchmark's models, the fit, and predict's two parts."""

from __future__ import annotations

import json

import pytest

from engine.latency import fixed
from engine.latency.cli import main
from engine.latency.dispatches import IO_DOWN, IO_UP, dispatch_list
from tests.helpers.latency import PROFILE, tiny_cell_model

TRUE = {"per_run": {"sleep": 0.5, "spin": 0.3}, "per_dispatch": 0.01, "up_ms_per_mb": 2.0,
        "down_ms_per_mb": 4.0}  # fmt: skip


def test_chains_vary_dispatches_and_add_mean_vary_bytes_apart():
    by_name = {g.name: dispatch_list(g, PROFILE) for g in fixed.graphs()}
    for k in fixed.CHAINS:  # k convolutions + the two io conversions
        assert len(by_name[f"chain{k}"]) == k + 2
        assert fixed.moved_mb(by_name[f"chain{k}"]) == (16e-6, 16e-6)
    n = fixed.SIDES[-1]
    rows = by_name[f"add{n}"]
    assert [d.kernel for d in (rows[0], rows[-1])] == [IO_UP, IO_DOWN]
    assert fixed.moved_mb(rows) == (n * n * 16 / 1e6, n * n * 16 / 1e6)
    assert fixed.moved_mb(by_name[f"mean{n}"]) == (n * n * 16 / 1e6, 16e-6)


def _row(sync, dispatches, up, down):
    host = (TRUE["per_run"][sync] + TRUE["per_dispatch"] * dispatches
            + TRUE["up_ms_per_mb"] * up + TRUE["down_ms_per_mb"] * down)  # fmt: skip
    return {"sync": sync, "dispatches": dispatches, "up_mb": up, "down_mb": down, "host_ms": host}


def test_fit_recovers_the_terms():
    rows = [_row(s, k + 2, 0.0, 0.0) for s in fixed.SYNCS for k in fixed.CHAINS]
    rows += [_row(s, 3, mb, mb) for s in fixed.SYNCS for mb in (0.01, 0.1, 1.0)]
    rows += [_row(s, 3, mb, 0.0) for s in fixed.SYNCS for mb in (0.01, 0.1, 1.0)]
    got = fixed.fit(rows)
    for sync in fixed.SYNCS:
        assert got["per_run"][sync] == pytest.approx(TRUE["per_run"][sync], rel=1e-6)
    for k in ("per_dispatch", "up_ms_per_mb", "down_ms_per_mb"):
        assert got[k] == pytest.approx(TRUE[k], rel=1e-6)


def test_fixed_ms_adds_the_terms():
    (g,) = [g for g in fixed.graphs() if g.name == "add8"]
    rows = dispatch_list(g, PROFILE)
    mb = 8 * 8 * 16 / 1e6
    assert fixed.fixed_ms(TRUE, rows, "spin") == pytest.approx(0.3 + 0.03 + 2 * mb + 4 * mb)


def _predictor(tmp_path):
    from engine.latency.predictors import DispatchLevel, engine_fingerprint
    from tests.helpers.latency import dataset

    p = DispatchLevel(units=2).fit(dataset(30))
    p.meta = {"adapter": "test", "precision": "fp32", "engine": engine_fingerprint(),
              "profile": PROFILE.to_dict()}  # fmt: skip
    return str(p.save(tmp_path / "dispatch.json"))


def test_predict_prints_gpu_time_fixed_cost_and_their_sum(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("ENGINE_LATENCY_CACHE", "0")
    model = tiny_cell_model(tmp_path)
    args = ["predict", str(model), "--predictor", _predictor(tmp_path), "--json"]
    assert main(args) == 0
    alone = json.loads(capsys.readouterr().out)
    assert alone["fixed_ms"] is None and alone["total_ms"] == alone["one_fit_ms"]
    path = tmp_path / "fixed" / "test.json"
    path.parent.mkdir()
    path.write_text(json.dumps({"params": TRUE}))
    monkeypatch.setattr(fixed, "fixed_path", lambda adapter: tmp_path / "fixed" / f"{adapter}.json")
    assert main([*args, "--sync", "spin"]) == 0
    both = json.loads(capsys.readouterr().out)
    assert both["gpu_ms"] == alone["gpu_ms"] > 0 and both["fixed_ms"] > TRUE["per_run"]["spin"]
    assert both["total_ms"] == pytest.approx(both["gpu_ms"] + both["fixed_ms"])
    assert main(args[:-1]) == 0
    assert "fixed cost" in capsys.readouterr().out.splitlines()[2]
