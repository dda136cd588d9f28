"""predict_vs_run: both predictions beside the measured statistics, the JSON."""

from __future__ import annotations

import json

from benchmarks.engine import predict_vs_run
from tests.helpers.gpu import gpu_context
from tests.helpers.latency import tiny_cell_model

gpu_context()


def test_predict_vs_run_reports_both_predictions_and_the_measured_statistics(
    tmp_path, capsys, monkeypatch
):
    from engine import config

    monkeypatch.setenv("ENGINE_CACHE_DIR", str(tmp_path / "cache"))  # no calibration there
    config.reload()
    out = tmp_path / "vs.json"
    assert (
        predict_vs_run.main([str(tiny_cell_model(tmp_path)), "--runs", "5", "--json", str(out)])
        == 0
    )
    assert "| cell |" in capsys.readouterr().out
    (row,) = json.loads(out.read_text())["rows"]
    assert row["predictor"] == "installed"
    assert row["runs"] == 5 and row["min_ms"] <= row["p10_ms"] <= row["median_ms"]
    assert row["predicted_ms"] > 0 and row["one_fit_ms"] > 0
