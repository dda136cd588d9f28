"""lowering: per-model times from a process per checkout, the table and the JSON."""

from __future__ import annotations

import json

from benchmarks.engine import lowering
from tests.helpers.latency import tiny_cell_model


def test_lowering_times_each_model_in_each_checkout(tmp_path, capsys):
    out = tmp_path / "lowering.json"
    model = str(tiny_cell_model(tmp_path))
    argv = [model, "--runs", "2", "--rounds", "2", "--against", ".", "--json", str(out)]
    assert lowering.main(argv) == 0
    assert "| this | cell | 4 |" in capsys.readouterr().out
    rows = json.loads(out.read_text())["rows"]
    assert [(r["checkout"], r["model"]) for r in rows] == [("this", "cell"), ("against", "cell")]
    assert all(len(r["samples_ms"]) == 4 and r["min_ms"] > 0 for r in rows)
