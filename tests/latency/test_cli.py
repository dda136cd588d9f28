"""engine-latency: errors are one line and exit code 2; predict prints `N.N ms`."""

from __future__ import annotations

from engine.latency.cli import main
from engine.model.ir import Graph, Op, Tensor
from engine.model.writer import write_tflite
from tests.helpers.latency import PROFILE, dataset, tiny_cell_model


def _error_line(capsys) -> str:
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1, err
    return err


def _predictor(tmp_path):
    from engine.latency.predictors import DispatchLevel, engine_fingerprint

    p = DispatchLevel(units=2).fit(dataset(30))
    p.meta = {"adapter": "test", "precision": "fp32", "engine": engine_fingerprint(),
              "profile": PROFILE.to_dict()}  # fmt: skip
    return str(p.save(tmp_path / "dispatch.json"))


def test_missing_dataset_is_one_line_exit_2(tmp_path, capsys):
    for cmd in ("fit", "report"):
        assert main([cmd, "--dataset", str(tmp_path / "none.csv.gz")]) == 2
        assert "no such latency dataset" in _error_line(capsys)


def test_unsupported_model_is_one_line_exit_2(tmp_path, capsys):
    g = Graph([Tensor("x", (1, 4), "float32"), Tensor("y", (1, 4), "float32")],
              [Op("NoSuchOp", (0,), (1,), custom=True)], [0], [1])  # fmt: skip
    path = tmp_path / "custom.tflite"
    path.write_bytes(write_tflite(g))
    assert main(["predict", str(path), "--predictor", _predictor(tmp_path)]) == 2
    assert "NoSuchOp" in _error_line(capsys)
    assert main(["predict", str(tmp_path / "missing.tflite")]) == 2
    assert "no such model file" in _error_line(capsys)


def test_unknown_adapter_is_one_line_exit_2(tmp_path, capsys):
    path = tiny_cell_model(tmp_path)
    assert main(["predict", str(path), "--adapter", "no-such-gpu"]) == 2
    assert "no predictor fitted for adapter 'no-such-gpu'" in _error_line(capsys)


def test_predict_prints_ms_and_breakdown(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("ENGINE_LATENCY_CACHE", "0")
    path = tiny_cell_model(tmp_path)
    assert main(["predict", str(path), "--predictor", _predictor(tmp_path)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].endswith(" ms") and float(out[0].split()[0]) > 0
    assert any("conv1x1" in line for line in out)
