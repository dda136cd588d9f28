"""predict_vs_run: both predictions beside the measured statistics, the JSON."""

from __future__ import annotations

import json

from benchmarks.engine import predict_vs_run
from engine.latency.builder import NetConfig, build_tflite
from engine.latency.cell import INPUT, OUTPUT, Cell
from tests.helpers.gpu import gpu_context

gpu_context()


def _model(tmp_path):
    path = tmp_path / "cell.tflite"
    path.write_bytes(build_tflite(Cell.make([[0, 1], [0, 0]], [INPUT, OUTPUT]), NetConfig()))
    return str(path)


def test_predict_vs_run_reports_both_predictions_and_the_measured_statistics(tmp_path, capsys):
    out = tmp_path / "vs.json"
    assert predict_vs_run.main([_model(tmp_path), "--runs", "5", "--json", str(out)]) == 0
    assert "| cell |" in capsys.readouterr().out
    (row,) = json.loads(out.read_text())["rows"]
    assert row["runs"] == 5 and row["min_ms"] <= row["p10_ms"] <= row["median_ms"]
    assert row["predicted_ms"] > 0 and row["one_fit_ms"] > 0
