"""Bounded memory per frame: each effect on the real headless path (benchmarks/app/soak.py) for
a few hundred frames; the live wgpu objects (wgpu-py's by type, wgpu-core's registries) do
not change after warm-up, and the heap (anonymous memory) stays flat (the face mesh ROI
outline grew ~190 KB per frame on lavapipe before it read its buffer as storage: 13 MB over
these 80 frames, measured). Over thousands of frames: docs/benchmarks.md, "Memory over long
runs"."""

from __future__ import annotations

import numpy as np
import pytest

from app.heap import HeapTrim
from benchmarks.app.soak import TARGET_MB_PER_MIN, slope_error, soak_effect, summarize
from tests.helpers.gpu import gpu_context
from tests.helpers.media import sample_clip

gpu_context()  # skips the module without an adapter
WARM = 40  # frames before the first compared sample (pipelines, first allocations)
ANON_MB = 6.0  # allowed heap growth over the compared frames (allocator noise ~1-2 MB)


# Hands, pose and holistic: first shapes keep coming through the people clip's first 300
# frames (hands appear at frame 75, new crops), so their growth is measured over thousands
# of frames by the soak benchmark, not here.
@pytest.mark.parametrize(("effect", "style", "frames"), [
    ("face-mesh", "points+roi", 120),
    pytest.param("segmentation", "blur", 300, marks=pytest.mark.slow),
    pytest.param("face-detection", "box+keypoints", 300, marks=pytest.mark.slow),
])  # fmt: skip
def test_no_growth_per_frame(effect, style, frames):
    run = soak_effect(effect, style, frames, 20, str(sample_clip()))
    assert run["exit"] == 0
    warm = [s for s in run["samples"] if s["frame"] >= WARM]
    assert len(warm) >= 3
    for s in warm[1:]:
        assert s["py"] == warm[0]["py"], (s["frame"], s["py"], warm[0]["py"])
        assert s["native_total"] == warm[0]["native_total"]
        assert s["gpu_bytes"] == warm[0]["gpu_bytes"]
    growth = warm[-1]["anon_mb"] - warm[0]["anon_mb"]
    assert growth < ANON_MB, [round(s["anon_mb"], 1) for s in run["samples"]]


def test_heap_trim_when_the_heap_grew():
    """A trim only where anonymous memory grew by the slack since the lowest reading after
    the last one (the reading after a trim starts over)."""
    always = HeapTrim(check=4, slack_mb=-1.0)  # any reading is "grown"
    for _ in range(12):  # reads at 4 (the first: a baseline), 8 (trim), 12 (a baseline)
        always.step()
    s = always.summary()
    assert s["check_frames"] == 4 and s["trims"] == (1 if s["available"] else 0)
    never = HeapTrim(check=4, slack_mb=1e6)
    for _ in range(12):
        never.step()
    assert never.summary()["trims"] == 0
    assert HeapTrim(check=0).summary()["available"] is False  # 0: never looks


def test_second_half_slope():
    """A store that fills for the first half and then stays: growth after warm-up, none in
    the second half (the slope the target is on)."""
    samples = [{"frame": f, "t_s": f / 50.0, "anon_mb": 100.0 + min(f, 1000) * 1e-3,
                "rss_mb": 200.0, "py_blocks": 1, "py_total": 10, "native_total": 20,
                "gpu_bytes": 0, "load": 1.0} for f in range(0, 2001, 100)]  # fmt: skip
    run = {"effect": "hands", "style": "skeleton", "frames": 2000, "exit": 0,
           "samples": samples, "input": "people.mp4"}  # fmt: skip
    row = summarize(run, warmup=300)
    assert row["slope_mb_per_min"] > 0.5  # 3 MB/min while filling
    assert abs(row["half_slope_mb_per_min"]) < 1e-6 and row["ok"]
    assert row["half_slope_mb_per_min"] < TARGET_MB_PER_MIN


def test_second_half_slope_error_is_the_least_squares_one():
    """The slope's standard error against the general least-squares formula (float64, the
    design matrix [t, 1]: sigma^2 (X'X)^-1), on noisy samples; and the slopes of many
    such runs spread by about that much."""
    rng = np.random.default_rng(7)
    t = np.arange(0.0, 300.0, 2.0)  # seconds, one sample every 100 frames at 50 FPS
    slopes, errors = [], []
    for _ in range(400):
        y = 150.0 + 0.1 * t / 60.0 + rng.normal(0.0, 1.2, t.size)
        samples = [{"frame": 100 * i, "t_s": float(ti), "anon_mb": float(yi)}
                   for i, (ti, yi) in enumerate(zip(t, y, strict=True))]  # fmt: skip
        x = np.stack([t / 60.0, np.ones_like(t)], axis=1)
        coef, residual, *_ = np.linalg.lstsq(x, y, rcond=None)
        sigma2 = residual[0] / (t.size - 2)
        want = np.sqrt(sigma2 * np.linalg.inv(x.T @ x)[0, 0])
        got = slope_error(samples, 0)
        assert got == pytest.approx(want, rel=1e-9)
        slopes.append(coef[0])
        errors.append(got)
    assert np.std(slopes) == pytest.approx(np.mean(errors), rel=0.15)


_HEAPS = """
import ctypes, ctypes.util, sys, tempfile, threading
from app.heap import share_heaps
if sys.argv[1] == "share":
    assert share_heaps()
def churn():  # frame-sized blocks made and freed, as the decoder and encoder workers do
    for _ in range(50):
        blocks = [bytearray(1 << 20) for _ in range(4)]
        del blocks
worker = threading.Thread(target=churn)
worker.start()
worker.join()
libc = ctypes.CDLL(ctypes.util.find_library("c"))
libc.fopen.restype = ctypes.c_void_p
libc.fopen.argtypes = [ctypes.c_char_p, ctypes.c_char_p]
libc.malloc_info.argtypes = [ctypes.c_int, ctypes.c_void_p]
libc.fclose.argtypes = [ctypes.c_void_p]
with tempfile.NamedTemporaryFile(suffix=".xml") as f:
    fp = libc.fopen(f.name.encode(), b"w")
    libc.malloc_info(0, fp)
    libc.fclose(fp)
    print(open(f.name).read().count("<heap nr="))
"""


@pytest.mark.parametrize(("mode", "heaps"), [("share", 1), ("own", 2)])
def test_threads_started_after_share_heaps_use_the_main_heap(mode, heaps):
    """glibc's heaps (malloc_info's <heap> elements) after a worker thread churned
    frame-sized blocks: a heap of its own without share_heaps(), none with it (where
    malloc_trim reaches its free memory: app/heap.py). A fresh process each: the count is
    the process's."""
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", _HEAPS, mode], capture_output=True, text=True,
                         check=True)  # fmt: skip
    assert int(out.stdout.strip()) == heaps, out.stderr


_MAPPED = """
import ctypes, ctypes.util, sys
from app.heap import _libc_function, map_large_blocks
if sys.argv[1] == "fixed":
    assert map_large_blocks()
libc = ctypes.CDLL(ctypes.util.find_library("c"))
libc.malloc.restype, libc.malloc.argtypes = ctypes.c_void_p, [ctypes.c_size_t]
libc.free.argtypes = [ctypes.c_void_p]
mapped = lambda: _libc_function("mallinfo2")().hblkhd  # bytes in mapped blocks now
size = 900 * 1024  # a 640x480 BGR frame
libc.free(libc.malloc(size))  # freed: glibc's dynamic threshold rises above it
before = mapped()
block = libc.malloc(size)
print(mapped() - before >= size)
libc.free(block)
"""


@pytest.mark.parametrize(("mode", "mapped"), [("fixed", "True"), ("dynamic", "False")])
def test_map_large_blocks_keeps_frame_sized_blocks_off_the_heap(mode, mapped):
    """A frame-sized block allocated after one was freed: mapped on its own with
    map_large_blocks() (mallinfo2's bytes in mapped blocks grow by it), carved out of the
    heap without (glibc raised its threshold). A fresh process each: the setting is the
    process's."""
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "MALLOC_MMAP_THRESHOLD_"}
    out = subprocess.run([sys.executable, "-c", _MAPPED, mode], capture_output=True, text=True,
                         check=True, env=env)  # fmt: skip
    assert out.stdout.strip() == mapped, out.stderr


def test_map_large_blocks_leaves_the_environments_threshold(monkeypatch):
    """glibc's MALLOC_MMAP_THRESHOLD_ set: glibc applied it at start; it is kept."""
    from app.heap import map_large_blocks

    monkeypatch.setenv("MALLOC_MMAP_THRESHOLD_", "131072")
    assert map_large_blocks() is False
