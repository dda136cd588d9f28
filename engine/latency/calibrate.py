"""Same-day calibration: the installed predictor carried to this machine's current speed.

- why: on a shared CPU the adapter's speed drifts from hour to hour. On the 2-core
  development machine lavapipe once ran the app's models 3.5-5x slower than when the
  installed predictor's cells were measured (the engine of those cells, commit 4c16a0f,
  timed beside the current one, was as slow: the machine, not the code), so the installed
  predictor was 66-72% under. A fit from old data cannot follow that; a few minutes of
  measurement on the machine as it is now can.
- what: `count` generated single-layer models (engine.latency.kernels: depthwise, 1x1,
  strided and 3x3 convolutions, element-wise ops, resizes, pools: the app's kinds of
  layer), measured now with their per-dispatch GPU times; the installed dispatch predictor
  carried to them (DispatchLevel.adapted: each kernel family scaled by its median ratio,
  the model-level terms refitted); saved in the user cache with the date, the count and
  the engine's fingerprint. `predict` takes it from then on, for that adapter and precision
  and this engine only, and says so; `predict --installed` takes the shipped one.
- NAS cells are not used: their 1x1 and 3x3 layers slowed by other ratios than the app's
  (a calibration on 120 cells left the app's models 33-45% under; measured, docs/latency.md).
- how close: the app's models within ±10% of run() measured the minute after in 7 of 9
  cases over three calibrations, the others -17%, -15% and +12% (docs/benchmarks.md,
  latency prediction): the machine's speed moves by about that much between minutes.

    path = calibrate(ctx, count=150)   # 1.5 min on lavapipe, 2 cores (3.5 with Mesa's cache cold)

Where calibrations live and which one predict takes: engine/latency/predict.py
(calibrated_path, find_calibrated).
"""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

from engine.errors import EngineError

COUNT = 150  # generated layers, 85-210 s on lavapipe: fewer moved the app's models more
# (the same measurement cut to 60 or 100 layers: -15% and -13% on face_landmark, docs)
MIN_LAYERS = 10
SEED = 0  # the kernels of the installed fit (measure --kernels), measured again


def check_count(count: int, name: str = "count") -> None:
    """A clear error for too few layers (`name`: how the caller calls the count), before
    any device is opened."""
    if count < MIN_LAYERS:
        raise ValueError(f"{name} {count}: a calibration needs at least {MIN_LAYERS} layers")


def carry(base, rows: list[dict], seed: int, load: float):
    """The predictor `base` carried to the measured `rows` (DispatchLevel.adapted), stamped
    with this engine's fingerprint (a calibration belongs to the engine that measured it)
    and what it was made from."""
    from engine.latency.predictors import samples
    from engine.latency.predictors.base import engine_fingerprint
    from engine.latency.repeat import LABEL

    carried = base.adapted(samples(rows, LABEL))
    carried.meta["engine"] = engine_fingerprint()
    carried.meta["calibrated"] = {
        "at": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "layers": len(rows),
        "seed": seed, "load": round(load, 2), "from_engine": base.meta.get("engine"),
    }  # fmt: skip
    return carried


def calibrate(ctx, precision: str = "fp32", count: int = COUNT, seed: int = SEED,
              protocol=None, progress: bool = True) -> Path:  # fmt: skip
    """Measure `count` generated layers on `ctx`'s adapter now, carry the installed
    predictor to them and save it (calibrated_path). The measured rows are kept beside it
    (<name>.csv.gz), replaced by each calibration; an interrupted one leaves nothing."""
    from engine.latency import measure
    from engine.latency.dataset import profile_path, read_rows
    from engine.latency.dispatches import adapter_slug
    from engine.latency.kernels import kernel_graphs, kernel_job
    from engine.latency.predict import calibrated_path, predictor_path
    from engine.latency.predictors import load

    check_count(count)
    if not ctx.has_timestamps:
        raise EngineError(f"{ctx.name}: no timestamp-query, so no per-dispatch GPU times to "
                          "calibrate with")  # fmt: skip
    if precision == "fp16" and not ctx.has_f16:
        raise EngineError(f"{ctx.name}: no shader-f16, so no fp16 to calibrate")
    adapter = adapter_slug(ctx.info)
    base = load(predictor_path(adapter, precision))
    out = calibrated_path(adapter, precision)
    out.parent.mkdir(parents=True, exist_ok=True)
    scratch = out.parent / f".{out.stem}.measuring.csv.gz"
    jobs = [kernel_job(key, g) for _, key, g in kernel_graphs(count, seed)]
    load_before = os.getloadavg()[0]
    try:
        _remove(scratch, profile_path(scratch))  # a calibration starts from nothing
        measure.run(jobs, len(jobs), scratch, ctx, precision, protocol or measure.Protocol(),
                    litert_threads=None, progress=progress)  # fmt: skip
        rows = read_rows(scratch) if scratch.exists() else []
        if len(rows) < MIN_LAYERS:
            raise EngineError(f"{ctx.name}: {len(rows)} of {count} generated layers measured, "
                              f"a calibration needs {MIN_LAYERS}")  # fmt: skip
        carry(base, rows, seed, max(load_before, os.getloadavg()[0])).save(out)
        kept = out.with_suffix(".csv.gz")
        shutil.move(profile_path(scratch), profile_path(kept))
        shutil.move(scratch, kept)
    finally:
        _remove(scratch, profile_path(scratch))
    return out


def _remove(*paths: Path) -> None:
    for path in paths:
        path.unlink(missing_ok=True)
