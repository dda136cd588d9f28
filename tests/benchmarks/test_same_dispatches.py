"""same_dispatches: hashes of the optimized dispatches, compared across checkouts; the
restamp of fitted predictors."""

from __future__ import annotations

import json
import shutil

import pytest

from benchmarks.engine.same_dispatches import hashes, main, restamp
from engine.latency.builder import NetConfig, build_tflite
from engine.latency.space import sample_cells
from tests.helpers.files import ROOT


def _models(tmp_path):
    folder = tmp_path / "models"
    folder.mkdir()
    (cell,) = sample_cells(1, seed=5)
    (folder / "cell.tflite").write_bytes(build_tflite(cell, NetConfig(), seed=0))
    return folder


@pytest.mark.gpu
def test_hashes_cover_every_target_and_the_dataset(tmp_path):
    got = hashes(_models(tmp_path), cells=2, layers=3)
    assert got.pop("__engine__") == str(ROOT / "engine") and got.pop("__fingerprint__")
    per_model = [k for k in got if k.startswith("cell:")]
    assert len(per_model) == 4 * 2 * 2  # device + 3 adapter classes x storage x precision
    assert {"cell0", "cell1", "cell0:features"} <= got.keys() and len(got) == 16 + 2 * (2 + 3)
    (tmp_path / "again").mkdir()
    again = hashes(_models(tmp_path / "again"), cells=2, layers=3)
    assert again.pop("__engine__") and again.pop("__fingerprint__")
    assert again == got  # the same programs, the same hashes


def _copy(tmp_path, name: str):
    """A second checkout of this engine (its package and templates)."""
    other = tmp_path / name
    for part in ("engine", "shaders"):
        shutil.copytree(ROOT / part, other / part, ignore=shutil.ignore_patterns("__pycache__"))
    return other


@pytest.mark.gpu
def test_a_copy_is_identical_and_a_changed_template_is_not(tmp_path, capsys):
    models = _models(tmp_path)
    other = _copy(tmp_path, "other")
    args = ["--against", str(other), "--models", str(models), "--cells", "1", "--layers", "2"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert f"vs {other / 'engine'}" in out and "0 differ" in out  # its engine, not ours
    conv = other / "shaders" / "engine" / "conv1x1.wgsl"
    conv.write_text(conv.read_text().replace("// 1x1 convolution", "// a 1x1 convolution"))
    assert main(args) == 1
    assert "0 differ" not in capsys.readouterr().out


def test_the_child_must_import_the_other_engine(tmp_path, capsys):
    models = _models(tmp_path)
    assert main(["--against", str(ROOT), "--models", str(models), "--cells", "1",
                 "--layers", "1"]) == 2  # fmt: skip
    assert "did not import" in capsys.readouterr().out


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


def test_adapters_leave_out_a_class_whose_table_changed(tmp_path, capsys):
    """A change to the gpu class's tile row alone: seen with every class compared, not
    with --adapters llvmpipe,swiftshader (what a lavapipe predictor's restamp needs)."""
    models = _models(tmp_path)
    other = _copy(tmp_path, "other")
    tiles = other / "engine" / "gpu" / "kernels" / "tile_tables.py"
    text = tiles.read_text()
    row = '    "gpu": GemmTile(128, 2, 2, shared_k=8, uniform=False),'
    assert row in text
    tiles.write_text(text.replace(row, '    "gpu": GemmTile(64, 4, 4, shared_k=4),'))
    args = ["--against", str(other), "--models", str(models), "--cells", "1", "--layers", "1"]
    assert main(args) == 1
    assert main([*args, "--adapters", "llvmpipe,swiftshader"]) == 0
    assert "0 differ" in capsys.readouterr().out
