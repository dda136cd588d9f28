"""models/manifest.json is consistent, and the fetched files match it."""

from __future__ import annotations

import re
import shutil

import pytest

from engine.catalog import fetch as fetch_mod
from engine.catalog.manifest import load_manifest, model_entry, model_path
from engine.catalog.paths import models_dir

MANIFEST = load_manifest()
NAMES = [m.name for m in MANIFEST.models]
CORE = {"face_detection_short_range", "selfie_segmentation", "face_landmark"}


def test_manifest_lists_the_wheel_models_and_the_npm_ones():
    assert MANIFEST.requirement == "mediapipe==0.10.14"
    assert len(NAMES) == 16 and len(set(NAMES)) == 16
    assert {m.name for m in MANIFEST.models if m.core} == CORE
    # what mediapipe 0.10.14's Python API downloads at run time, from the npm registry
    npm = {m.name: m.npm for m in MANIFEST.models if m.npm}
    assert npm == {
        "pose_landmark_lite": "@mediapipe/pose",
        "pose_landmark_heavy": "@mediapipe/pose",
    }
    package = MANIFEST.npm_packages["@mediapipe/pose"]
    assert package.tarball.startswith("https://registry.npmjs.org/@mediapipe/pose/-/")
    assert package.version in package.tarball and re.fullmatch(r"[0-9a-f]{64}", package.sha256)


@pytest.mark.parametrize("name", NAMES)
def test_entry_is_complete(name):
    e = model_entry(name)
    assert e.file == f"{name}.tflite"
    folder = "package/" if e.npm else "mediapipe/modules/"  # the npm tarball's, the wheel's
    assert e.wheel_path.startswith(folder) and e.wheel_path.endswith(e.file)
    assert re.fullmatch(r"[0-9a-f]{64}", e.sha256) and e.size > 0
    assert e.preprocess["color"] == "RGB"
    assert e.input_range in ((-1.0, 1.0), (0.0, 1.0))
    assert e.preprocess["fit"] in ("letterbox", "stretch", "roi")
    assert len(e.inputs) == 1 and e.inputs[0].shape[0] == 1 and e.inputs[0].shape[-1] == 3
    assert e.outputs and all(o.meaning for o in e.outputs)
    if e.postprocess:
        assert e.postprocess["kind"] == "ssd" and e.preprocess["fit"] == "letterbox"
        assert list(e.postprocess["anchors"]["input_size"]) == list(e.inputs[0].shape[2:0:-1])


def test_model_path_and_unknown_name():
    assert model_path("face_landmark") == models_dir() / "face_landmark.tflite"
    with pytest.raises(KeyError, match="known: face_detection_short_range"):
        model_entry("no_such_model")


def _tflite_io(path):
    import tflite

    m = tflite.Model.GetRootAsModel(path.read_bytes(), 0)
    sg = m.Subgraphs(0)

    def io(ids):
        return [(sg.Tensors(i).Name().decode(), tuple(sg.Tensors(i).ShapeAsNumpy())) for i in ids]

    ins = io(sg.Inputs(i) for i in range(sg.InputsLength()))
    outs = io(sg.Outputs(i) for i in range(sg.OutputsLength()))
    return ins, outs


@pytest.mark.parametrize("name", NAMES)
def test_fetched_file_matches_manifest(name):
    e = model_entry(name)
    if not e.path.is_file():
        pytest.skip(f"{e.path} not fetched: run `make models` (python -m engine.catalog.fetch)")
    assert e.path.stat().st_size == e.size
    assert fetch_mod.sha256_file(e.path) == e.sha256, (
        f"{e.file}: re-run python -m engine.catalog.fetch"
    )
    ins, outs = _tflite_io(e.path)
    assert ins == [(t.name, t.shape) for t in e.inputs]
    assert outs == [(t.name, t.shape) for t in e.outputs]


def _cached_wheel():
    wheel = fetch_mod.find_cached_wheel(MANIFEST, fetch_mod.default_cache())
    if wheel is None:
        pytest.skip("no cached mediapipe wheel in models/.cache: run `make models`")
    return wheel


def test_fetch_is_idempotent_and_repairs(tmp_path, capsys):
    wheel = _cached_wheel()
    name = "face_detection_short_range"
    got = fetch_mod.fetch(only=[name], dest=tmp_path, wheel=wheel)
    assert [e.name for e in got] == [name]
    target = tmp_path / f"{name}.tflite"
    assert fetch_mod.sha256_file(target) == model_entry(name).sha256
    assert fetch_mod.fetch(only=[name], dest=tmp_path, wheel=wheel) == []  # nothing to do
    target.write_bytes(b"corrupt")
    assert [e.name for e in fetch_mod.fetch(only=[name], dest=tmp_path, wheel=wheel)] == [name]
    assert fetch_mod.sha256_file(target) == model_entry(name).sha256
    assert "mismatch" in capsys.readouterr().out


def test_fetch_core_from_cache(tmp_path):
    cache = tmp_path / "cache"
    cache.mkdir()
    shutil.copy(_cached_wheel(), cache)
    got = fetch_mod.fetch(core=True, dest=tmp_path / "m", cache=cache)
    assert {e.name for e in got} == CORE


def test_check_mode_exits_2_without_downloading(tmp_path, capsys):
    from engine.catalog.cli import main

    argv = ["models", "--check", "--dest", str(tmp_path), "--cache", str(tmp_path / "c")]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and err.startswith("engine-fetch models: error:")
    assert not (tmp_path / "c").exists()


def test_unknown_model_is_one_line_exit_2(capsys):
    assert fetch_mod.main(["--only", "nope", "--check"]) == 2
    assert "no model named 'nope'" in capsys.readouterr().err


def test_npm_models_come_from_the_checked_tarball(tmp_path):
    package = MANIFEST.npm_packages["@mediapipe/pose"]
    cached = fetch_mod.default_cache() / package.tarball.rsplit("/", 1)[-1]
    if not cached.is_file():
        pytest.skip(f"no cached {cached.name} in models/.cache: run `make models`")
    cache = tmp_path / "cache"
    cache.mkdir()
    shutil.copy(cached, cache)
    got = fetch_mod.fetch(only=["pose_landmark_lite"], dest=tmp_path / "m", cache=cache)
    assert [e.name for e in got] == ["pose_landmark_lite"]
    lite = tmp_path / "m" / "pose_landmark_lite.tflite"
    assert fetch_mod.sha256_file(lite) == model_entry("pose_landmark_lite").sha256


def test_a_tarball_with_other_bytes_is_refused(tmp_path):
    """A download whose sha256 is not the manifest's is an error naming it, and nothing of
    it is kept (a file:// URL stands for the registry)."""
    from engine.catalog.manifest import NpmPackage

    fake = tmp_path / "pose-0.0.1.tgz"
    fake.write_bytes(b"not the package")
    package = NpmPackage("@mediapipe/pose", "0.0.1", fake.as_uri(), "0" * 64)
    with pytest.raises(fetch_mod.FetchError, match=r"pose-0.0.1.tgz has sha256 .*manifest says"):
        fetch_mod.npm_tarball(package, tmp_path / "cache")
    assert list((tmp_path / "cache").iterdir()) == []
