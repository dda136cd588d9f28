"""SIGINT / SIGTERM on a headless ar-demo (a subprocess): one line on stderr, exit 130 / 143,
a video OpenCV plays holding every frame written, the stats written, and
frames_read == frames_written + frames_failed. Mid-run, twice in a row, and during start-up
(adapter creation, model compile: a harness sends the signal from inside that step)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import cv2
import pytest

from tests.helpers.files import ROOT, model_file
from tests.helpers.gpu import gpu_context
from tests.helpers.media import sample_clip
from tests.helpers.paused import start_paused

gpu_context()  # skips the module without an adapter
CODES = {"SIGINT": 130, "SIGTERM": 143}


def _args(tmp_path, *extra) -> list[str]:
    return ["--model", str(model_file("face_detection_short_range")), "--input",
            str(sample_clip()), "--headless", "--output", str(tmp_path / "out.mp4"),
            "--stats", str(tmp_path / "stats.json"), "--no-progress", *extra]  # fmt: skip


def _env() -> dict:
    return {**os.environ, "PYTHONPATH": str(ROOT)}


def _frames_in(path) -> int:
    cap = cv2.VideoCapture(str(path))
    n = 0
    while cap.read()[0]:
        n += 1
    cap.release()
    return n


def _check(proc, stderr: str, tmp_path, name: str) -> dict:
    """The contract after a signal; returns the stats."""
    lines = stderr.strip().splitlines()
    assert proc.returncode == CODES[name], (proc.returncode, stderr)
    assert len(lines) == 1 and lines[0].startswith(f"ar-demo: interrupted by {name}"), stderr
    stats = json.loads((tmp_path / "stats.json").read_text())
    assert stats["interrupted"] == name and stats["exit_code"] == CODES[name]
    assert stats["frames_read"] == stats["frames_written"] + stats["frames_failed"]
    out = tmp_path / "out.mp4"
    if stats["frames_read"]:
        assert _frames_in(out) == stats["frames_in_output"] == stats["frames_read"]
    else:
        assert not out.exists()  # stopped before the writer opened: no half file
    return stats


@pytest.mark.parametrize("name", ["SIGTERM", "SIGINT"])
def test_signal_mid_run_keeps_every_frame(tmp_path, name):
    proc = start_paused(_args(tmp_path))
    proc.send_signal(getattr(signal, name))
    _, err = proc.communicate(timeout=120)
    stats = _check(proc, err, tmp_path, name)
    assert 0 < stats["frames_read"] < 300


def test_second_signal_during_shutdown_does_not_cut_the_file(tmp_path):
    proc = start_paused(_args(tmp_path))
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGTERM, signal.SIGINT):
        proc.send_signal(sig)
        time.sleep(0.03)
    _, err = proc.communicate(timeout=120)
    _check(proc, err, tmp_path, "SIGTERM")


# A harness: the signal arrives from inside a start-up step (deterministic, unlike a timer).
HARNESS = textwrap.dedent("""
    import os, signal, sys
    import {module} as target
    original = target.{attr}
    def step(*args, **kwargs):
        os.kill(os.getpid(), signal.{name})
        return original(*args, **kwargs)
    target.{attr} = step
    from app.cli import main
    sys.exit(main())
""")
STEPS = {"adapter": ("engine.gpu.device", "pick_adapter"),
         "compile": ("engine.gpu.engine", "compile_graph")}  # fmt: skip


@pytest.mark.parametrize(("step", "name"), [
    ("compile", "SIGINT"),
    ("compile", "SIGTERM"),
    ("adapter", "SIGINT"),
    ("adapter", "SIGTERM"),
])  # fmt: skip
def test_signal_during_start_up(tmp_path, step, name):
    module, attr = STEPS[step]
    code = HARNESS.format(module=module, attr=attr, name=name)
    # the engine's compile step is the webgpu backend's (auto picks xnnpack on lavapipe)
    args = _args(tmp_path, "--backend", "webgpu")
    proc = subprocess.run([sys.executable, "-c", code, *args], cwd=ROOT, env=_env(),
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    stats = _check(proc, proc.stderr, tmp_path, name)
    assert stats["frames_read"] == 0 and "no frame was written" in proc.stderr
    assert stats["stage"] == {"adapter": "creating the WebGPU device",
                              "compile": "compiling the models"}[step]  # fmt: skip


def test_signal_states_in_process():
    """StopSignals by itself: start-up raises, the loop asks once then raises (never inside
    a hold), shutdown only notes; the handlers before are put back."""
    from app.signals import Interrupted, StopSignals

    before = signal.getsignal(signal.SIGTERM)
    stop = StopSignals.install()
    try:
        with pytest.raises(Interrupted) as err:
            signal.raise_signal(signal.SIGTERM)
        assert err.value.exit_code == 143 and stop.exit_code == 143
        stop.restore()
        stop = StopSignals.install()
        with stop.loop():
            signal.raise_signal(signal.SIGINT)
            assert stop.requested and stop.name == "SIGINT"
            with pytest.raises(Interrupted):
                with stop.hold():
                    signal.raise_signal(signal.SIGINT)  # deferred to the end of the hold
                    done = True
            assert done
        stop.shutdown()
        signal.raise_signal(signal.SIGTERM)  # noted only
        assert stop.count == 3 and stop.exit_code == 130
    finally:
        stop.restore()
    assert signal.getsignal(signal.SIGTERM) == before
