"""Predict a model's latency on an adapter without running it (no device is created).

    pred = predict_file("models/face_landmark.tflite")   # this day's calibration, else installed
    pred.total_ms, pred.rows   # per dispatch: (DispatchInfo, ms); pred.warnings
    pred.gpu_ms, pred.fixed_ms # GPU time of the dispatch list, the host's fixed cost
    print(format_prediction(pred))

Two quantities, predicted apart: the GPU time of the dispatch list (the predictor's
per-kernel models, fitted on per-dispatch timestamps) and the host's fixed cost of run()
for the sync mode (engine/latency/fixed.py, its own microbenchmark); total_ms is their
sum where the adapter's fixed cost is fitted, else the dispatch predictor's own total
(one_fit_ms: its model-level terms fitted on measured totals).

The dispatch-level predictor file carries the AdapterProfile it was fitted for, so the
dispatch list is computed for that adapter (engine.latency.dispatches) and summed by
the predictor. --adapter picks the installed predictor of that adapter; a predictor
fitted for another adapter or a stale engine is used with a warning. Where this engine
has a same-day calibration for the adapter and precision (engine-latency calibrate,
engine/latency/calibrate.py) predict takes it and names it; `installed=True` (CLI
`--installed`) takes the shipped fit. Without --adapter that is lavapipe's where it is
installed: on another adapter, calibrate and predict with its --adapter name. A
calibration covers GPU time (the dispatch predictor) only: the fixed cost added to it is
the installed one (fixed.py).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from engine.errors import EngineError, ModelError

INSTALLED = "installed"  # Prediction.predictor of the shipped fit


@dataclass
class Prediction:
    model: str
    total_ms: float  # gpu_ms + fixed_ms where the adapter's fixed cost is fitted, else one_fit_ms
    adapter: str
    precision: str
    rows: list = field(default_factory=list)  # (DispatchInfo, ms)
    warnings: list[str] = field(default_factory=list)
    per_run_ms: float = 0.0
    gpu_ms: float = 0.0  # the per-kernel models summed over the dispatches (io excluded)
    fixed_ms: float | None = None  # the host's, engine/latency/fixed.py; None: not fitted
    sync: str = "sleep"
    one_fit_ms: float = 0.0  # the dispatch predictor's own total (model-level terms on totals)
    predictor: str = INSTALLED  # or "calibrated <when> ..." (describe) or a path

    def to_dict(self) -> dict:
        return {
            "model": self.model, "total_ms": self.total_ms, "gpu_ms": self.gpu_ms,
            "fixed_ms": self.fixed_ms, "sync": self.sync, "one_fit_ms": self.one_fit_ms,
            "adapter": self.adapter, "precision": self.precision, "per_run_ms": self.per_run_ms,
            "predictor": self.predictor, "warnings": self.warnings,
            "dispatches": [{"kernel": d.kernel, "op": d.op_type, "op_index": d.op_index,
                            "output": list(d.output), "workgroup": list(d.workgroup),
                            "groups": list(d.groups), "flops": d.flops, "ms": ms}
                           for d, ms in self.rows],
        }  # fmt: skip


def fitted_predictors() -> dict[str, Path]:
    """Installed dispatch predictors: "<adapter>-<precision>" -> file."""
    from engine.latency.predictors import FITTED_DIR

    return {p.stem: p for p in sorted(FITTED_DIR.glob("*.json"))}


def predictor_path(adapter: str | None, precision: str) -> Path:
    have = fitted_predictors()
    if adapter is None:
        names = [k for k in have if k.endswith(f"-{precision}")]
        adapter = "lavapipe" if f"lavapipe-{precision}" in have else (names[0].rsplit("-", 1)[0] if names else "lavapipe")  # fmt: skip
    key = f"{adapter}-{precision}"
    if key not in have:
        raise EngineError(f"no predictor fitted for adapter {adapter!r} at {precision} "
                          f"(installed: {', '.join(have) or 'none'}); measure it and run "
                          "engine-latency fit --install")  # fmt: skip
    return have[key]


def predict_graph(
    graph, predictor, adapter: str | None = None, precision: str = "fp32", sync: str = "sleep"
) -> Prediction:
    """The dispatch-level prediction for a graph with a loaded predictor."""
    from engine.latency.dispatches import AdapterProfile, dispatch_list

    profile = AdapterProfile.from_dict(_dispatch_predictor(predictor).meta["profile"])
    rows = dispatch_list(graph, profile, precision)
    return _predict_rows(graph.name, rows, predictor, adapter, precision, sync)


def _dispatch_predictor(predictor):
    if predictor.kind != "dispatch":
        raise EngineError(f"predict needs a dispatch-level predictor, not {predictor.kind!r}")
    return predictor


def _predict_rows(name: str, rows: list, predictor, adapter, precision,
                  sync: str = "sleep") -> Prediction:  # fmt: skip
    """Both predictions of a dispatch list: the predictor's own total, and GPU time (its
    per-kernel models) + the host's fixed cost (fixed.py), the total where fitted."""
    from engine.latency.fixed import fixed_ms, load_fixed
    from engine.latency.predictors.base import Sample
    from engine.latency.predictors.dispatch import IO

    sample = Sample(hash="", flops=0, peak_memory=0, dispatches=rows)
    parts = predictor.breakdown(sample)
    per_run = predictor.params["per_run"]
    profile = predictor.meta["profile"]
    one_fit = per_run + sum(parts)
    gpu = sum(predictor.kernel_ms(d) for d in rows if d.op_type != IO)
    params = load_fixed(profile["name"])
    fixed = fixed_ms(params, rows, sync) if params else None
    return Prediction(name, gpu + fixed if params else one_fit, profile["name"], precision,
                      list(zip(rows, parts, strict=True)), predictor.warnings(adapter, precision),
                      per_run, gpu, fixed, sync, one_fit)  # fmt: skip


def calibrated_path(adapter: str, precision: str) -> Path:
    """Where the calibration of `adapter` at `precision` lives (the user cache)."""
    from engine.gpu.adapter_cache import cache_root

    return cache_root() / "latency" / "calibrated" / f"{adapter}-{precision}.json"


def find_calibrated(adapter: str, precision: str) -> tuple[Path | None, str]:
    """(the calibrated predictor's file, "") when there is one for this engine, else
    (None, why not: "" when none was made)."""
    from engine.latency.predictors.base import engine_fingerprint

    path = calibrated_path(adapter, precision)
    if not path.is_file():
        return None, ""
    try:
        meta = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        return None, f"{path}: unreadable calibration ignored ({exc})"
    if meta.get("engine") != engine_fingerprint():
        return None, (f"{path}: calibrated for engine {meta.get('engine')}, this engine is "
                      f"{engine_fingerprint()}: ignored (run engine-latency calibrate)")  # fmt: skip
    return path, ""


def describe(meta: dict) -> str:
    """How a predictor's file names itself in predict's output."""
    cal = meta.get("calibrated")
    if not cal:
        return INSTALLED
    return f"calibrated {cal['at']} on {cal['layers']} generated layers (load {cal['load']})"


def choose_predictor(adapter: str | None, precision: str,
                     installed: bool = False) -> tuple[Path, str]:  # fmt: skip
    """(the predictor file predict takes, a warning or ""): this engine's calibration for
    the adapter and precision (engine-latency calibrate) unless `installed`, else the
    installed fit."""
    path = predictor_path(adapter, precision)
    if installed:
        return path, ""
    calibrated, why_not = find_calibrated(path.stem.removesuffix(f"-{precision}"), precision)
    return calibrated or path, why_not


def predict_file(model: str | os.PathLike, adapter: str | None = None, precision: str = "fp32",
                 predictor: str | os.PathLike | None = None, sync: str = "sleep",
                 installed: bool = False) -> Prediction:  # fmt: skip
    """Predict a .tflite file's latency (see the module docstring)."""
    from engine.latency.dispatches import AdapterProfile, DispatchInfo, dispatch_list
    from engine.latency.predictors import load

    path = Path(model)
    if not path.is_file():
        raise ModelError(f"{path}: no such model file")
    chosen, note = (
        (Path(predictor), "") if predictor else choose_predictor(adapter, precision, installed)
    )
    p = _dispatch_predictor(load(chosen))
    cache = _cache_file(path, p, precision)
    if cache is not None and cache.exists():
        rows = [DispatchInfo.from_list(d) for d in json.loads(cache.read_text())]
    else:
        from engine.latency import wgmemo
        from engine.model.importer import load_tflite

        profile = AdapterProfile.from_dict(p.meta["profile"])
        wgmemo.preload(profile)  # the app's layer shapes: no work-group ranking
        rows = dispatch_list(load_tflite(path), profile, precision)
        if cache is not None:
            cache.parent.mkdir(parents=True, exist_ok=True)
            cache.write_text(json.dumps([d.to_list() for d in rows]))
    pred = _predict_rows(str(path), rows, p, adapter, precision, sync)
    pred.predictor = str(chosen) if predictor else describe(p.meta)
    pred.warnings += [note] if note else []
    return pred


def _cache_file(path: Path, predictor, precision: str) -> Path | None:
    """Where the dispatch list of this file for this adapter, precision and engine is kept
    (<cache root>/latency/, engine/gpu/adapter_cache.py), so a second prediction skips
    compiling the model; None with ENGINE_LATENCY_CACHE=0."""
    import hashlib

    from engine.config import settings
    from engine.gpu.adapter_cache import cache_root
    from engine.latency.predictors.base import engine_fingerprint

    if not settings().latency_cache:
        return None
    key = hashlib.sha256(path.read_bytes())
    key.update(json.dumps(predictor.meta["profile"], sort_keys=True).encode())
    key.update(f"{precision}:{engine_fingerprint()}".encode())
    return cache_root() / "latency" / f"{key.hexdigest()[:24]}.json"


def format_prediction(pred: Prediction, top: int = 0) -> str:
    """`12.3 ms` then the per-dispatch table (slowest `top` only when > 0) and warnings."""
    lines = [f"{pred.total_ms:.1f} ms", f"{pred.model} on {pred.adapter} ({pred.precision}): "
             f"{len(pred.rows)} dispatches; predictor: {pred.predictor}"]  # fmt: skip
    if pred.predictor.startswith("calibrated"):
        lines[-1] += " (`--installed` for the shipped fit)"
    if pred.fixed_ms is None:
        lines.append(f"GPU time {pred.gpu_ms:.2f} ms; no fixed cost fitted for {pred.adapter} "
                     f"(engine-latency measure-fixed): the dispatch predictor's total")  # fmt: skip
    else:
        lines.append(f"GPU time {pred.gpu_ms:.2f} ms + fixed cost {pred.fixed_ms:.2f} ms "
                     f"({pred.sync}) = {pred.total_ms:.2f} ms; the dispatch predictor's own "
                     f"total: {pred.one_fit_ms:.2f} ms")  # fmt: skip
    rows = list(enumerate(pred.rows))
    if top:
        rows = sorted(rows, key=lambda r: -r[1][1])[:top]
    lines.append(f"{'#':>4} {'op':>4} {'kernel':<18} {'op type':<16} {'output':<18} "
                 f"{'workgroup':<11} {'groups':<12} {'MFLOP':>8} {'ms':>8}")  # fmt: skip
    for i, (d, ms) in rows:
        shape = "x".join(map(str, d.output))
        lines.append(f"{i:>4} {d.op_index:>4} {d.kernel:<18} {d.op_type:<16} {shape:<18} "
                     f"{'x'.join(map(str, d.workgroup)):<11} {'x'.join(map(str, d.groups)):<12} "
                     f"{d.flops / 1e6:>8.2f} {ms:>8.4f}")  # fmt: skip
    lines += [f"warning: {w}" for w in pred.warnings]
    return "\n".join(lines)
