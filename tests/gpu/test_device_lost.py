"""A lost WebGPU device (simulated with device.destroy()): the engine raises DeviceLostError
(also on later calls), shared_context() replaces the lost context, and an Engine on the new
device gives the reference interpreter's answer; ar-demo finishes its file and exits 4."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import cv2
import numpy as np
import pytest

from engine.errors import DeviceLostError
from engine.gpu.device import GpuContext, is_device_lost
from engine.model.ir import Graph, Op, Tensor
from engine.reference import Interpreter
from tests.helpers.gpu import gpu_context

gpu_context()  # skips the module without an adapter


def _graph() -> Graph:
    tensors = [Tensor("x", (1, 4, 4, 8), "float32"), Tensor("y", (1, 4, 4, 8), "float32")]
    return Graph(tensors, [Op("RELU", (0,), (1,))], [0], [1], name="relu")


def _feeds():
    return {"x": np.random.default_rng(0).normal(size=(1, 4, 4, 8)).astype(np.float32)}


def test_engine_on_a_lost_device_raises_device_lost_error():
    from engine.gpu.engine import Engine

    ctx = GpuContext.create()  # a device of its own: the shared one stays usable
    engine = Engine(_graph(), context=ctx)
    engine.run(_feeds())
    ctx.device.destroy()
    for _ in range(2):  # the first call finds out, the next ones know
        with pytest.raises(DeviceLostError, match="device was lost.*new Engine"):
            engine.run(_feeds())
    assert ctx.lost and is_device_lost(RuntimeError("x"), ctx)
    with pytest.raises(DeviceLostError):
        Engine(_graph(), context=ctx)


def test_shared_context_replaces_a_lost_one(monkeypatch):
    import engine.gpu.device as device
    from engine.gpu.engine import Engine

    lost = GpuContext.create()
    lost.device.destroy()
    monkeypatch.setattr(device, "_shared", {None: lost})
    fresh = device.shared_context()
    assert fresh is not lost and not fresh.probe_lost()
    got = Engine(_graph(), context=fresh).run(_feeds())["y"]
    (want,) = Interpreter(_graph()).run(_feeds()).values()
    np.testing.assert_allclose(got, want, rtol=1e-6)
    assert device.shared_context() is fresh  # a live context is kept


HARNESS = textwrap.dedent("""
    import sys
    from app.pipeline import FramePipeline
    original = FramePipeline.submit
    def submit(self, frame, *args, **kwargs):
        if frame.index == {at}:
            self.device.destroy()
        return original(self, frame, *args, **kwargs)
    FramePipeline.submit = submit
    from app.cli import main
    sys.exit(main())
""")


def test_ar_demo_finishes_the_file_when_the_device_is_lost(tmp_path):
    from tests.helpers.files import ROOT, model_file
    from tests.helpers.media import sample_clip

    out, stats = tmp_path / "out.mp4", tmp_path / "stats.json"
    args = ["--model", str(model_file("face_detection_short_range")), "--input",
            str(sample_clip()), "--headless", "--output", str(out), "--stats", str(stats),
            "--no-progress", "--frames", "30"]  # fmt: skip
    proc = subprocess.run([sys.executable, "-c", HARNESS.format(at=5), *args], cwd=ROOT,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True,
                          text=True, timeout=300)  # fmt: skip
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 4, proc.stderr
    assert len(lines) == 1 and "GPU device was lost" in lines[0], proc.stderr
    s = json.loads(stats.read_text())
    assert s["device_lost"] and s["exit_code"] == 4
    # the frames in flight when the device went are written as inputs: frame 5, and frame
    # 4 too when it was still on the GPU (headless keeps IN_FLIGHT = 2 frames in flight)
    assert s["frames_read"] == 6 and s["frames_written"] + s["frames_failed"] == 6
    failed = [f["index"] for f in s["failed_frames"]]
    assert failed in ([5], [4, 5]), failed
    cap = cv2.VideoCapture(str(out))
    n = 0
    while cap.read()[0]:
        n += 1
    assert n == 6


def test_solution_on_a_lost_device_raises_device_lost_error(astronaut_rgb):
    from engine.vision import FaceDetector

    ctx = GpuContext.create()
    with FaceDetector(context=ctx, backend="webgpu") as det:
        assert len(det.process(astronaut_rgb).detections) == 1
        ctx.device.destroy()
        with pytest.raises(DeviceLostError):
            det.process(astronaut_rgb)
