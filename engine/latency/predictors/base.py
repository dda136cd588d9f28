"""What every predictor shares: the sample it reads, JSON files with provenance, metrics.

A `Sample` is one measured (or to-be-predicted) model: LETI's features (FLOPs, peak
memory, adjacency, ops), the engine's dispatch list and, when profiled, per-dispatch
GPU times; `y` is the measured engine latency (ms, mean of the protocol's runs).
A predictor file is JSON: {"kind", "adapter", "precision", "engine", "fitted_on",
"params"}; `engine` is the kernels fingerprint (engine_fingerprint()): a prediction with
a predictor fitted for another adapter or another engine says so (`warnings()`).
Predictors never pickle (XGBoost keeps its own JSON model format beside the file).
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass, field
from pathlib import Path

from engine.latency.dispatches import DispatchInfo


@dataclass
class Sample:
    hash: str
    flops: int
    peak_memory: int
    dispatches: list[DispatchInfo]
    y: float | None = None  # measured ms
    dispatch_ms: list | None = None  # profiled GPU ms per dispatch (None for io)
    adjacency: list | None = None
    ops: list | None = None
    vertices: int | None = None
    config: dict = field(default_factory=dict)
    layers: list | None = None  # LUT keys, filled on demand
    tag: str = "uniform"  # dataset row's sample: uniform / small / model
    model: str = ""

    @classmethod
    def from_row(cls, row: dict, target: str = "mean") -> Sample:
        """A dataset row; `target`: the engine's "mean" (LETI) or "median" run time."""
        return cls(
            hash=row["hash"],
            flops=row["flops"],
            peak_memory=row["peak_memory"],
            dispatches=[DispatchInfo.from_list(d) for d in row["dispatch_list"] or []],
            y=label(row, target),
            dispatch_ms=row.get("dispatch_ms"),
            adjacency=row.get("adjacency"),
            ops=row.get("ops"),
            vertices=row.get("vertices"),
            config=row.get("config") or {},
            tag=row.get("sample") or "uniform",
            model=row.get("model") or "",
        )


class Predictor:
    """Base class: `kind`, fit(samples), predict(sample) -> ms, params <-> JSON."""

    kind = "predictor"
    needs_cell = False  # True: only NAS-Bench-101 cells (adjacency/ops features)

    def __init__(self, params: dict | None = None, meta: dict | None = None):
        self.params = params or {}
        self.meta = meta or {}

    def fit(self, samples: list[Sample]) -> Predictor:
        raise NotImplementedError

    def predict(self, sample: Sample) -> float:
        raise NotImplementedError

    def predict_many(self, samples: list[Sample]) -> list[float]:
        return [self.predict(s) for s in samples]

    def save(self, path: str | Path) -> Path:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        doc = {"kind": self.kind, **self.meta, "params": self.params}
        path.write_text(json.dumps(doc, indent=1) + "\n")
        return path

    def warnings(self, adapter: str | None, precision: str | None = None) -> list[str]:
        """Why this predictor may not fit the asked adapter / precision / this engine."""
        out = []
        mine = self.meta.get("adapter")
        if adapter and mine and adapter != mine:
            out.append(f"predictor fitted for adapter {mine!r}, not {adapter!r}: "
                       "re-measure and fit on that adapter")  # fmt: skip
        if precision and self.meta.get("precision") not in (None, precision):
            out.append(f"predictor fitted for {self.meta['precision']}, not {precision}")
        fitted = self.meta.get("engine")
        if fitted and fitted != engine_fingerprint():
            out.append(f"predictor fitted for engine kernels {fitted}, this engine is "
                       f"{engine_fingerprint()} (stale: re-measure and fit)")  # fmt: skip
        return out


def engine_fingerprint() -> str:
    """Short hash of what decides the dispatches and their speed: kernel specs, work group
    rules, transforms, the op and element-wise tables (fusion facts, WGSL expressions) and
    WGSL templates. A changed file means a new engine version."""
    import engine

    pkg = Path(engine.__file__).resolve().parent
    shaders = pkg.parent / "shaders" / "engine"
    if not shaders.is_dir():
        shaders = pkg / "shaders"  # installed wheel
    files = []
    for folder, pattern in ((pkg / "gpu" / "kernels", "*.py"), (pkg / "gpu" / "workgroups", "*.py"),
                            (pkg / "transforms", "*.py"), (pkg / "model", "op_specs.py"),
                            (pkg / "model", "elementwise.py"), (shaders, "*.wgsl")):  # fmt: skip
        files += sorted(folder.glob(pattern))
    h = hashlib.sha256()
    for f in files:
        h.update(f.name.encode())
        h.update(f.read_bytes())
    return h.hexdigest()[:12]


GPU = "gpu"  # the label that is no statistic of run(): the GPU time of the dispatch list


def label(row: dict, target: str = "mean") -> float | None:
    """A dataset row's label: the `target` statistic of its run() times (engine_<target>_ms),
    or for "gpu" the sum of its profiled dispatch times (timestamp queries; None where the
    row has none)."""
    if target == GPU:
        times = [ms for ms in row.get("dispatch_ms") or [] if ms is not None]
        return sum(times) if times else None
    return row.get(f"engine_{target}_ms")


def within(pred: float, true: float, tol: float) -> bool:
    return math.isfinite(pred) and abs(pred - true) <= tol * true


def metrics(preds: list[float], trues: list[float]) -> dict:
    """Acc@±1/5/10% (share of models within), RMSE (ms), MAPE (%), n."""
    n = len(trues)
    ok = [(p, t) for p, t in zip(preds, trues, strict=True) if math.isfinite(p)]
    acc = {f"acc{int(tol * 100)}": sum(within(p, t, tol) for p, t in zip(preds, trues, strict=True)) / n
           for tol in (0.01, 0.05, 0.10)}  # fmt: skip
    rmse = math.sqrt(sum((p - t) ** 2 for p, t in ok) / len(ok)) if ok else math.nan
    mape = 100 * sum(abs(p - t) / t for p, t in ok) / len(ok) if ok else math.nan
    return {**acc, "rmse_ms": rmse, "mape": mape, "n": n, "predicted": len(ok)}


def lstsq_nonneg(a, b, w=None):
    """Least squares with non-negative coefficients (active-set: drop the most negative
    coefficient and re-solve until none is negative); `w`: per-row weights."""
    import numpy as np

    a, b = np.asarray(a, float), np.asarray(b, float)
    if w is not None:
        a, b = a * w[:, None], b * w
    active = list(range(a.shape[1]))
    coef = np.zeros(a.shape[1])
    while active:
        sol, *_ = np.linalg.lstsq(a[:, active], b, rcond=None)
        if (sol >= 0).all():
            coef[active] = sol
            break
        active.pop(int(np.argmin(sol)))
    return coef
