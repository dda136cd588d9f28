"""The live window under Xvfb: ar-demo on the sample clip shows the effect and the HUD,
then exits cleanly. The screenshot is Xvfb's own framebuffer (-fbdir, XWD format), i.e.
what a person would see on that screen; it is saved as window.png in the test's tmp dir."""

from __future__ import annotations

import os
import shutil
import struct
import subprocess
import sys
import time
from pathlib import Path

import cv2
import numpy as np
import pytest

from tests.app.conftest import sample_clip
from tests.conftest import ROOT, model_file
from tests.gpu.util import gpu_context

gpu_context()
if shutil.which("Xvfb") is None:
    pytest.skip("Xvfb missing (`make setup` installs Debian's xvfb)", allow_module_level=True)
for mod in ("glfw", "rendercanvas", "imgui_bundle"):
    pytest.importorskip(mod, reason=f"{mod} not installed (a runtime dependency of ar-demo)")


def _free_display() -> int:
    for n in range(90, 200):
        if not Path(f"/tmp/.X11-unix/X{n}").exists() and not Path(f"/tmp/.X{n}-lock").exists():
            return n
    pytest.skip("no free X display number")


def read_xwd(path: Path) -> np.ndarray:
    """Xvfb's -fbdir screen file (XWD, 32 bits per pixel, LSB first) -> BGR array."""
    data = path.read_bytes()
    header = struct.unpack(">25I", data[:100])
    header_size, width, height = header[0], header[4], header[5]
    bits, bytes_per_line, ncolors = header[11], header[12], header[19]
    assert bits == 32, bits
    start = header_size + 12 * ncolors
    rows = np.frombuffer(data[start : start + bytes_per_line * height], np.uint8)
    return rows.reshape(height, bytes_per_line)[:, : width * 4].reshape(height, width, 4)[..., :3]


@pytest.fixture
def xvfb(tmp_path):
    n = _free_display()
    fbdir = tmp_path / "fb"
    fbdir.mkdir()
    proc = subprocess.Popen(["Xvfb", f":{n}", "-screen", "0", "800x600x24", "-fbdir", str(fbdir),
                             "-nolisten", "tcp"], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)  # fmt: skip
    deadline = time.time() + 10
    while not Path(f"/tmp/.X11-unix/X{n}").exists():
        if time.time() > deadline or proc.poll() is not None:
            proc.kill()
            pytest.skip("Xvfb did not start")
        time.sleep(0.1)
    yield f":{n}", fbdir / "Xvfb_screen0"
    proc.terminate()
    proc.wait(timeout=10)


def _hud_text_pixels(img: np.ndarray) -> int:
    """Grey-white pixels (imgui's text) in the HUD's first lines, top left."""
    region = img[25:110, 10:180].astype(int)
    grey = (region.min(axis=2) > 170) & (np.ptp(region, axis=2) < 25)
    return int(grey.sum())


def test_window_shows_effect_and_hud(xvfb, tmp_path):
    display, fb = xvfb
    env = {**os.environ, "DISPLAY": display}
    cmd = [sys.executable, "-m", "app.cli", "--model", str(model_file("selfie_segmentation")),
           "--input", str(sample_clip()), "--style", "replace", "--frames", "60"]  # fmt: skip
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)  # fmt: skip
    shot, deadline = None, time.time() + 90
    while proc.poll() is None and time.time() < deadline:
        time.sleep(0.5)
        img = read_xwd(fb)
        if img[:480, :640].mean() > 20 and _hud_text_pixels(img) > 100:
            time.sleep(1.0)  # a second more: the latency plot fills in
            shot = read_xwd(fb)
            break
    out, err = proc.communicate(timeout=120)
    assert shot is not None, f"nothing on screen; stderr: {err[-2000:]}"
    cv2.imwrite(str(tmp_path / "window.png"), shot)
    assert proc.returncode == 0 and "Traceback" not in err, err[-2000:]
    assert "ar-demo window" in out and "tensor_readbacks 0" in out
    frame = shot[:480, :640].astype(int)
    assert frame.std() > 20  # a picture, not a flat colour
    # the replaced background (dark blue gradient) in the top right, where the clip is light
    corner = frame[10:60, 560:630].reshape(-1, 3).mean(axis=0)  # BGR
    assert corner[0] > corner[2] + 20 and corner[1] < 120, corner
    assert _hud_text_pixels(shot) > 100
