"""same_dispatches: hashes of the optimized dispatches, compared across checkouts; the
restamp of fitted predictors."""

from __future__ import annotations

import json

from engine.latency.builder import NetConfig, build_tflite
from engine.latency.space import sample_cells
from engine.tools.same_dispatches import hashes, main, restamp
from tests.conftest import ROOT


def _models(tmp_path):
    folder = tmp_path / "models"
    folder.mkdir()
    (cell,) = sample_cells(1, seed=5)
    (folder / "cell.tflite").write_bytes(build_tflite(cell, NetConfig(), seed=0))
    return folder


def test_hashes_cover_every_target_and_the_dataset(tmp_path):
    got = hashes(_models(tmp_path), cells=2, layers=3)
    assert got.pop("__engine__") == str(ROOT / "engine")
    per_model = [k for k in got if k.startswith("cell:")]
    assert len(per_model) == 3 * 2 * 2  # adapter classes x storage kinds x precisions
    assert {"cell0", "cell1"} <= got.keys() and len(got) == 12 + 2 + 3
    (tmp_path / "again").mkdir()
    again = hashes(_models(tmp_path / "again"), cells=2, layers=3)
    assert again.pop("__engine__") and again == got  # the same programs, the same hashes


def test_this_checkout_against_itself_is_identical(tmp_path, capsys):
    models = _models(tmp_path)
    assert main(["--against", str(ROOT), "--models", str(models), "--cells", "1",
                 "--layers", "2"]) == 0  # fmt: skip
    assert "0 differ" in capsys.readouterr().out


def test_restamp_rewrites_only_predictors_of_the_measured_engine(tmp_path):
    fitted = tmp_path / "engine/latency/fitted"
    fitted.mkdir(parents=True)
    (fitted / "a.json").write_text(json.dumps({"kind": "x", "engine": "old", "params": {}}))
    (fitted / "b.json").write_text(json.dumps({"kind": "x", "engine": "other", "params": {}}))
    assert restamp("old", "new", root=tmp_path) == [fitted / "a.json"]
    a = json.loads((fitted / "a.json").read_text())
    assert a["engine"] == "new" and a["measured_on_engine"] == "old"
    restamp("new", "newer", root=tmp_path)  # a second restamp keeps what it was measured on
    assert json.loads((fitted / "a.json").read_text())["measured_on_engine"] == "old"
    assert json.loads((fitted / "b.json").read_text())["engine"] == "other"
