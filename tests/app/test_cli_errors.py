"""ar-demo's errors a person can fix: one line on stderr, exit 2, no traceback."""

from __future__ import annotations

import subprocess
import sys

import pytest

from app.cli import main
from tests.app.conftest import sample_clip
from tests.conftest import ROOT, model_file


def _run(*args: str):
    proc = subprocess.run([sys.executable, "-m", "app.cli", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    errors = [line for line in proc.stderr.splitlines() if line.startswith("ar-demo: error:")]
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc.returncode, errors


def _fails_with(args, *words):
    code, errors = _run(*args)
    assert code == 2 and len(errors) == 1, (code, errors)
    for w in words:
        assert w in errors[0], errors[0]


def test_help_documents_every_option():
    proc = subprocess.run([sys.executable, "-m", "app.cli", "--help"], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)  # fmt: skip
    assert proc.returncode == 0
    for opt in ("--model", "--input", "--headless", "--output", "--effect", "--sync",
                "--planner", "--precision", "--frames", "--stats", "--hud", "--no-hud",
                "--adapter", "--style"):  # fmt: skip
        assert opt in proc.stdout, opt


def test_missing_model():
    _fails_with(["--model", "models/no_such_model.tflite"], "model not found")


def test_unreadable_model(tmp_path):
    bad = tmp_path / "bad.tflite"
    bad.write_bytes(b"not a flatbuffer")
    _fails_with(["--model", str(bad)], "bad.tflite")


def test_missing_and_unreadable_video(tmp_path):
    seg = str(model_file("selfie_segmentation"))
    _fails_with(["--model", seg, "--input", str(tmp_path / "nope.mp4"), "--headless"],
                "no such file")  # fmt: skip
    junk = tmp_path / "junk.mp4"
    junk.write_bytes(b"\x00" * 1000)
    _fails_with(["--model", seg, "--input", str(junk), "--headless"], "junk.mp4")


def test_no_camera_suggests_input_file():
    seg = str(model_file("selfie_segmentation"))
    _fails_with(["--model", seg, "--input", "9"], "camera", "--input FILE")


def test_outputs_fit_no_effect():
    _fails_with(["--model", str(model_file("iris_landmark")), "--input", str(sample_clip())],
                "--effect")  # fmt: skip


def test_effect_without_its_models():
    seg = str(model_file("selfie_segmentation"))
    _fails_with(["--model", seg, "--effect", "face-mesh", "--input", str(sample_clip())],
                "needs a detection")  # fmt: skip


def test_no_adapter_says_how_to_install_a_driver(monkeypatch, capsys):
    """No WebGPU adapter at all (simulated: enumeration returns none) -> driver hint."""
    wgpu = pytest.importorskip("wgpu")
    import engine.gpu.device as device

    monkeypatch.setattr(device, "_shared", {})
    monkeypatch.setattr(wgpu.gpu, "enumerate_adapters_sync", lambda: [])
    code = main(["--model", str(model_file("selfie_segmentation")), "--input",
                 str(sample_clip()), "--headless", "--frames", "1", "--output", "/dev/null"])  # fmt: skip
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1
    assert "no WebGPU adapter" in err[0] and "mesa-vulkan-drivers" in err[0]


def test_adapter_that_does_not_exist():
    _fails_with(["--model", str(model_file("selfie_segmentation")), "--input", str(sample_clip()),
                 "--headless", "--adapter", "no-such-gpu"], "no-such-gpu")  # fmt: skip
