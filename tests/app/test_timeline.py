"""The run's timeline keeps its memory bounded: exact percentiles while the frames fit, a
uniform sample of them after (numpy's percentiles of every value as the oracle)."""

from __future__ import annotations

import numpy as np

from app.timeline import HEAD, FrameRecord, Timeline


def _records(n: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    for i in range(n):
        rec = FrameRecord(i, t_capture=i * 0.01, sync="spin" if i % 3 == 0 else "sleep")
        rec.t_done = rec.t_capture + rng.gamma(4.0, 5.0) / 1e3
        rec.cpu_ms = {"upload": float(rng.uniform(0, 2)), "render": float(rng.uniform(0, 5))}
        rec.gpu_ms = {"inference": float(rng.normal(20, 3))}
        rec.wait_ms = float(rng.uniform(5, 10))
        yield rec


def test_exact_while_the_frames_fit():
    tl = Timeline(keep=1000)
    recs = list(_records(500))
    for r in recs:
        tl.add(r)
    tl.warmup = 2
    s = tl.summary()
    lat = np.array([r.latency_ms for r in recs[2:]])
    assert s["frames"] == 500 and s["frames_measured"] == s["frames_sampled"] == 498
    np.testing.assert_allclose(s["latency_ms"]["p90"], np.percentile(lat, 90), rtol=1e-5)
    up = np.array([r.cpu_ms["upload"] for r in recs[2:]])
    np.testing.assert_allclose(s["cpu_ms"]["upload"]["p50"], np.median(up), rtol=1e-5)
    spin = [r for r in recs[2:] if r.sync == "spin"]
    assert s["by_sync"]["spin"]["frames"] == len(spin)
    np.testing.assert_allclose(s["fps"], 498 / (recs[-1].t_done - recs[2].t_capture))


def test_bounded_sample_after_that():
    tl = Timeline(keep=2000)
    rows = tl._rows.nbytes
    recs = list(_records(40_000, seed=1))
    for r in recs:
        tl.add(r)
    tl.warmup = 2
    s = tl.summary()
    assert tl._rows.nbytes == rows  # no growth with the number of frames
    assert s["frames"] == 40_000 and s["frames_sampled"] == HEAD - 2 + 2000
    gpu = np.array([r.gpu_ms["inference"] for r in recs[2:]])
    for q in ("p50", "p90"):  # a 2,000-frame uniform sample: within a few percent
        want = np.percentile(gpu, int(q[1:]))
        assert abs(s["gpu_ms"]["inference"][q] - want) < 0.05 * want
