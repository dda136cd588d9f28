"""submit_sweep: plans parsed or refused, a sweep's table and JSON, usage errors."""

from __future__ import annotations

import json

import pytest

from benchmarks.engine.submit_sweep import main, parse_plan
from engine.gpu.submits import SubmitPlan
from engine.latency.builder import NetConfig, build_tflite
from engine.latency.space import sample_cells
from tests.helpers.gpu import gpu_context

gpu_context()


@pytest.mark.parametrize("text, plan", [("none", SubmitPlan()), ("8", SubmitPlan(8)),
                                        (" 8/32 ", SubmitPlan(8, 32))])  # fmt: skip
def test_plans(text, plan):
    assert parse_plan(text) == plan


@pytest.mark.parametrize("text", ["0", "8/0", "a", "8/16/32", "", "-4"])
def test_bad_plans(text):
    with pytest.raises(ValueError, match="expected none"):
        parse_plan(text)


def test_a_sweep_writes_every_plan(tmp_path, capsys):
    model = tmp_path / "cell.tflite"
    (cell,) = sample_cells(1, seed=3)
    model.write_bytes(build_tflite(cell, NetConfig(), seed=0))
    out = tmp_path / "sweep.json"
    assert main([str(model), "--plans", "none,1/1", "--rounds", "1", "--block", "1",
                 "--recording", "direct,wgpu-py", "--sync", "sleep,spin",
                 "--json", str(out)]) == 0  # fmt: skip
    assert "| 1/1 |" in capsys.readouterr().out
    (m,) = json.loads(out.read_text())["models"]
    rows = {r["contender"]: r for r in m["rows"]}
    assert set(rows) == {f"{plan}{rec}{sync}" for plan in ("none", "1/1")
                         for rec in ("", " wgpu-py") for sync in ("", " spin")}  # fmt: skip
    assert rows["none"]["submits"] == 1
    assert rows["1/1"]["submits"] == m["dispatches"]  # after each but the last, then the end


def test_usage_errors(tmp_path, capsys):
    assert main([str(tmp_path / "missing.tflite")]) == 2
    assert "no such model" in capsys.readouterr().err
    for bad in (["--plans", "8/0"], ["--rounds", "0"], ["--plans", ","], ["--recording", "x"],
                ["--sync", "busy"]):  # fmt: skip
        with pytest.raises(SystemExit) as exc:
            main([str(tmp_path / "x.tflite"), *bad])
        assert exc.value.code == 2
