"""The host's fixed cost of a run(), apart from the GPU time of its dispatch list.

run() wall time = GPU time of the model's dispatches + what the host pays around them:

    fixed_ms = per_run[sync] + per_dispatch x dispatches + up_ms_per_mb x MB uploaded
               + down_ms_per_mb x MB read back

- per_run: one submit and its wait in each sync mode (sleep, spin), the command encoder,
  the feeds' checks; per_dispatch: recording one dispatch (the io conversions included:
  their GPU time is not profiled, so it lands here); per MB: write_buffer of the inputs
  (raw HWC bytes), mapping and copying the outputs back.
- Fitted by non-negative least squares on its own microbenchmark: the engine's run() on
  trivial models (engine-latency measure-fixed): chains of 1..64 1x1 convolutions of a
  1x1x1x4 tensor (dispatches vary, bytes ~0) and one ADD / one MEAN over 1xNxNx4 tensors
  (MB up and down vary, apart). The label of each is run() minus the GPU time of its
  dispatches measured on the spot (Engine.profile() timestamps: lavapipe here has
  timestamp-query), median over round-robin runs (measure.py's protocol).
- Saved, data and fit together, as fitted/fixed/<adapter>.json, read by predict.

    rows = measure_fixed(ctx)          # [{"name", "sync", "dispatches", "up_mb", ...}]
    params = fit(rows)                 # {"per_run": {"sleep", "spin"}, "per_dispatch", ...}
    fixed_ms(params, dispatch_rows, "sleep")
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from engine.latency.dispatches import IO_DOWN, IO_UP, DispatchInfo

SYNCS = ("sleep", "spin")
CHAINS = (1, 2, 4, 8, 16, 32, 64)  # dispatches of the chain models (+ 2 io conversions)
SIDES = (8, 32, 64, 128, 256)  # N of the 1xNxNx4 ADD / MEAN models: 1 KB .. 1 MB


def moved_mb(rows: list[DispatchInfo]) -> tuple[float, float]:
    """(MB uploaded, MB read back) of one run: the raw bytes of the io conversions."""
    up = sum(d.bytes_read for d in rows if d.kernel == IO_UP)
    down = sum(d.bytes_written for d in rows if d.kernel == IO_DOWN)
    return up / 1e6, down / 1e6


def fixed_ms(params: dict, rows: list[DispatchInfo], sync: str = "sleep") -> float:
    """The host's fixed cost (ms) of one run of the dispatch list `rows`."""
    up, down = moved_mb(rows)
    return (params["per_run"][sync] + params["per_dispatch"] * len(rows)
            + params["up_ms_per_mb"] * up + params["down_ms_per_mb"] * down)  # fmt: skip


def fixed_path(adapter: str) -> Path:
    from engine.latency.predictors import FITTED_DIR

    return FITTED_DIR / "fixed" / f"{adapter}.json"


def load_fixed(adapter: str) -> dict | None:
    """The fitted parameters for `adapter`, or None (no microbenchmark fitted for it)."""
    try:
        return json.loads(fixed_path(adapter).read_text())["params"]
    except (OSError, ValueError, KeyError):
        return None


def graphs() -> list:
    """The microbenchmark's trivial models (module docstring)."""
    import numpy as np

    from engine.model.builder import GraphBuilder

    out = []
    for k in CHAINS:
        b = GraphBuilder(f"chain{k}")
        x = y = b.tensor((1, 1, 1, 4), name="x")
        for _ in range(k):
            w = b.const(np.eye(4, dtype=np.float32).reshape(4, 1, 1, 4))
            y = b.op("CONV_2D", (y, w, b.const(np.zeros(4, np.float32))), padding="VALID",
                     stride_w=1, stride_h=1)  # fmt: skip
        out.append(b.graph([x], [y]))
    for n in SIDES:
        b = GraphBuilder(f"add{n}")
        x = b.tensor((1, n, n, 4), name="x")
        out.append(b.graph([x], [b.op("ADD", (x, x))]))
        b = GraphBuilder(f"mean{n}")
        x = b.tensor((1, n, n, 4), name="x")
        axes = b.const(np.array([1, 2], np.int32))
        out.append(b.graph([x], [b.op("MEAN", (x, axes), (1, 1, 1, 4), keep_dims=True)]))
    return out


def measure_fixed(ctx, protocol=None, profile_runs: int = 5) -> list[dict]:
    """One row per (model, sync): run() median and the GPU time of its dispatches (ms)."""
    from engine.gpu.engine import Engine
    from engine.latency import measure
    from engine.latency.dispatches import AdapterProfile, dispatch_list

    if not ctx.has_timestamps:
        raise ValueError(f"{ctx.name}: no timestamp-query, so no GPU time to take off run()")
    protocol = protocol or measure.Protocol()
    profile = AdapterProfile.from_context(ctx)
    cases = []
    for g in graphs():
        rows = dispatch_list(g, profile, "fp32")
        for sync in SYNCS:
            cases.append((g, rows, Engine(g, context=ctx, sync=sync), measure.random_feeds(g)))
    fns = [lambda e=e, f=f: e.run(f) for _, _, e, f in cases]
    times = measure.timed_round_robin(fns, protocol)
    out = []
    for (g, rows, e, _), t in zip(cases, times, strict=True):
        per = measure.profiled(e, g, ctx, profile_runs, rows)
        up, down = moved_mb(rows)
        run_ms = measure.summary(t)["engine_median_ms"]
        gpu = sum(ms for ms in per if ms is not None)
        out.append({"name": g.name, "sync": e.sync, "dispatches": len(rows), "up_mb": up,
                    "down_mb": down, "run_ms": round(run_ms, 5), "gpu_ms": round(gpu, 5),
                    "host_ms": round(run_ms - gpu, 5)})  # fmt: skip
    return out


def fit(rows: list[dict]) -> dict:
    """Non-negative least squares of host_ms on [sleep, spin, dispatches, up MB, down MB],
    weighted to relative error."""
    import numpy as np

    from engine.latency.predictors.base import lstsq_nonneg

    a = np.array([[r["sync"] == "sleep", r["sync"] == "spin", r["dispatches"], r["up_mb"],
                   r["down_mb"]] for r in rows], float)  # fmt: skip
    y = np.array([max(r["host_ms"], 1e-3) for r in rows])
    c = lstsq_nonneg(a, y, 1 / y)
    pred = a @ c
    return {"per_run": {"sleep": float(c[0]), "spin": float(c[1])}, "per_dispatch": float(c[2]),
            "up_ms_per_mb": float(c[3]), "down_ms_per_mb": float(c[4]),
            "fit_mape": float(100 * np.mean(np.abs(pred - y) / y))}  # fmt: skip


def write(ctx, out: str | os.PathLike | None = None, protocol=None) -> Path:
    """Measure, fit and save (data and fit) for the adapter of `ctx`."""
    from engine.latency.dispatches import adapter_slug
    from engine.latency.measure import engine_commit
    from engine.latency.predictors.base import engine_fingerprint

    rows = measure_fixed(ctx, protocol)
    adapter = adapter_slug(ctx.info)
    doc = {"adapter": adapter, "engine": engine_fingerprint(), "engine_commit": engine_commit(),
           "measured_at": time.strftime("%Y-%m-%dT%H:%M:%S"),
           "load_avg": round(os.getloadavg()[0], 2), "params": fit(rows), "rows": rows}  # fmt: skip
    path = Path(out or fixed_path(adapter))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=1) + "\n")
    return path
