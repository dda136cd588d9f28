"""engine-latency calibrate: the installed predictor carried to the current speed, taken by
predict for this engine only, named in its output; --installed and stale files aside."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine import config
from engine.latency.calibrate import carry
from engine.latency.cli import main
from engine.latency.dataset import read_rows
from engine.latency.predict import calibrated_path, predict_file, predictor_path
from engine.latency.predictors import load
from engine.latency.predictors.base import engine_fingerprint
from tests.helpers.files import ROOT, model_file

MODEL = "face_detection_short_range"
KERNELS = ROOT / "data" / "latency" / "lavapipe-kernels.csv.gz"  # generated layers, lavapipe


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """A cache folder of the test's own: the run's (tests/conftest.py) is shared by every test."""
    monkeypatch.setenv("ENGINE_CACHE_DIR", str(tmp_path / "cache"))
    config.reload()
    yield tmp_path / "cache"
    monkeypatch.undo()
    config.reload()


def _slower(rows: list[dict], factor: float) -> list[dict]:
    """The same measurements on a machine `factor` times slower."""
    out = []
    for r in rows:
        r = dict(r, dispatch_ms=[None if t is None else t * factor for t in r["dispatch_ms"]])
        timed = {k for k, v in r.items() if k.startswith("engine_") and k.endswith("_ms") and v}
        out.append({k: v * factor if k in timed else v for k, v in r.items()})
    return out


def _save_calibration(rows: list[dict], engine: str | None = None):
    """What calibrate saves for `rows` (calibrate.carry), optionally stamped by another engine."""
    carried = carry(load(predictor_path("lavapipe", "fp32")), rows, seed=0, load=1.0)
    if engine:
        carried.meta["engine"] = engine
    return carried.save(calibrated_path("lavapipe", "fp32"))


def test_a_machine_three_times_slower_predicts_three_times_the_time(cache):
    """Carrying the predictor is linear in the machine's speed: the same layers measured 3x
    slower give 3x the GPU time and 3x the predictor's own total, on a model it never saw."""
    rows = read_rows(KERNELS)[:40]
    _save_calibration(rows)
    same = predict_file(model_file(MODEL))
    _save_calibration(_slower(rows, 3.0))
    slow = predict_file(model_file(MODEL))
    assert slow.gpu_ms == pytest.approx(3 * same.gpu_ms, rel=1e-6)
    assert slow.one_fit_ms == pytest.approx(3 * same.one_fit_ms, rel=1e-6)
    assert slow.predictor.startswith("calibrated ") and " on 40 generated layers" in slow.predictor


def test_predict_names_its_predictor_and_installed_skips_the_calibration(cache):
    installed = predict_file(model_file(MODEL))
    assert installed.predictor == "installed" and not installed.warnings
    _save_calibration(_slower(read_rows(KERNELS)[:40], 2.0))
    assert predict_file(model_file(MODEL)).predictor.startswith("calibrated")
    again = predict_file(model_file(MODEL), installed=True)
    assert again.predictor == "installed" and again.gpu_ms == installed.gpu_ms


def test_a_calibration_of_another_engine_is_ignored_with_a_warning(cache):
    path = _save_calibration(read_rows(KERNELS)[:40], engine="0123456789ab")
    pred = predict_file(model_file(MODEL))
    assert pred.predictor == "installed"
    assert [w for w in pred.warnings if str(path) in w and "ignored" in w]


def test_a_calibration_is_stamped_by_the_engine_that_measured_it():
    """Not by the installed fit it started from: a calibration stays usable after the
    kernels change and before the installed fit is redone."""
    base = load(predictor_path("lavapipe", "fp32"))
    base.meta["engine"] = "0123456789ab"
    carried = carry(base, read_rows(KERNELS)[:20], seed=0, load=1.0)
    assert carried.meta["engine"] == engine_fingerprint()
    assert carried.meta["calibrated"]["from_engine"] == "0123456789ab"
    assert carried.meta["calibrated"]["layers"] == 20


def test_too_few_layers_is_one_line_exit_2_before_a_device(cache, capsys, monkeypatch):
    def no_device(*args, **kwargs):
        raise AssertionError("a device was opened")

    monkeypatch.setattr("engine.gpu.device.shared_context", no_device)
    assert main(["calibrate", "--kernels", "3"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["engine-latency: error: --kernels 3: a calibration needs at least 10 layers"]


@pytest.mark.gpu
def test_calibrate_measures_today_and_predict_takes_it(cache, capsys):
    assert main(["calibrate", "--kernels", "10", "--runs", "3", "--warmup", "1",
                 "--no-progress"]) == 0  # fmt: skip
    from engine.gpu.device import shared_context
    from engine.latency.dispatches import adapter_slug

    adapter = adapter_slug(shared_context().info)
    path = calibrated_path(adapter, "fp32")
    assert capsys.readouterr().out.startswith(f"{path}: calibrated ")
    doc = json.loads(path.read_text())
    assert doc["calibrated"]["layers"] == 10 and doc["adapted_with"] == 10
    assert doc["engine"] == engine_fingerprint()  # the measuring engine's, not the base's
    rows = read_rows(path.with_suffix(".csv.gz"))  # the measured layers, kept beside it
    assert len(rows) == 10 and all(r["dispatch_ms"] for r in rows)
    assert not list(path.parent.glob(".*measuring*"))
    assert main(["predict", str(model_file(MODEL)), "--adapter", adapter]) == 0
    assert "predictor: calibrated " in capsys.readouterr().out


def test_an_interrupted_calibration_leaves_the_one_before(cache, monkeypatch):
    """Ctrl-C while measuring: the scratch rows go, the previous calibration stays."""
    from types import SimpleNamespace

    from engine.latency import calibrate, measure
    from engine.latency.dataset import profile_path

    before = _save_calibration(read_rows(KERNELS)[:40])
    text = before.read_text()

    def interrupted(jobs, total, out, *args, **kwargs):
        Path(out).write_bytes(b"partial")
        profile_path(out).write_text("{}")
        raise KeyboardInterrupt

    monkeypatch.setattr(measure, "run", interrupted)
    ctx = SimpleNamespace(name="lavapipe", info={"vendor": "llvmpipe"}, has_timestamps=True,
                          has_f16=True)  # fmt: skip
    with pytest.raises(KeyboardInterrupt):
        calibrate.calibrate(ctx, count=10, progress=False)
    assert sorted(p.name for p in before.parent.iterdir()) == [before.name]
    assert before.read_text() == text
