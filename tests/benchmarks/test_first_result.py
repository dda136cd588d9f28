"""first_result: fresh processes per kernel set, the table and the JSON it writes."""

from __future__ import annotations

import json

from benchmarks.engine.first_result import main
from engine.latency.builder import NetConfig, build_tflite
from engine.latency.space import sample_cells
from tests.helpers.gpu import gpu_context

gpu_context()


def test_one_round_per_kernel_set_with_later_runs(tmp_path, capsys):
    out = tmp_path / "first.json"
    model = tmp_path / "cell.tflite"  # a small generated network: a few shaders to compile
    (cell,) = sample_cells(1, seed=3)
    model.write_bytes(build_tflite(cell, NetConfig(), seed=0))
    assert main([str(model), "--rounds", "1", "--cache", "warm", "--runs", "2",
                 "--json", str(out)]) == 0  # fmt: skip
    table = capsys.readouterr().out
    assert "| cell | optimized | warm |" in table and "| cell | compact | warm |" in table
    doc = json.loads(out.read_text())
    assert {r["contender"] for r in doc["rows"]} == {"optimized", "compact"}
    for row in doc["rows"]:  # the parts add up to the whole; the later runs were timed
        assert row["import"] + row["engine"] + row["run"] <= row["seconds"] + 1e-6
        assert row["run_ms"] > 0
    assert doc["stamp"]["load"]["cpus"] >= 1 and doc["stamp"]["adapter"]["class"]
