"""predict_cold: fresh processes per model and the floor, the table and the JSON."""

from __future__ import annotations

import json

from benchmarks.engine import predict_cold
from tests.helpers.latency import tiny_cell_model


def test_predict_cold_times_each_model_and_the_floor(tmp_path, capsys):
    out = tmp_path / "cold.json"
    assert (
        predict_cold.main([str(tiny_cell_model(tmp_path)), "--runs", "1", "--json", str(out)]) == 0
    )
    assert "| this | cell | 1 |" in capsys.readouterr().out
    rows = json.loads(out.read_text())["rows"]
    assert [r["model"] for r in rows] == ["cell", *predict_cold.FLOORS]
    assert all(r["min_ms"] > 0 and len(r["samples_ms"]) == 1 for r in rows)
