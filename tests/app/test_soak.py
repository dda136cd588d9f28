"""Bounded memory per frame: each effect on the real headless path (benchmarks/app/soak.py) for
a few hundred frames; the live wgpu objects (wgpu-py's by type, wgpu-core's registries) do
not change after warm-up, and the heap (anonymous memory) stays flat (the face mesh ROI
outline grew ~190 KB per frame on lavapipe before it read its buffer as storage: 13 MB over
these 80 frames, measured)."""

from __future__ import annotations

import pytest

from benchmarks.app.soak import soak_effect
from tests.helpers.gpu import gpu_context
from tests.helpers.media import sample_clip

gpu_context()  # skips the module without an adapter
WARM = 40  # frames before the first compared sample (pipelines, first allocations)
ANON_MB = 6.0  # allowed heap growth over the compared frames (allocator noise ~1-2 MB)


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
