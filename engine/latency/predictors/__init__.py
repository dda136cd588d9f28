"""Latency predictors, all fitted on the same dataset and split (docs/latency.md).

(a) LookupTable: sum of single-layer latencies; (b) FlopsLinear; (c) BetterFlops;
(d) XGBoost on LETI's 58 features; (e) DispatchLevel, ours.

    rows = read_rows("data/latency/lavapipe.csv.gz")
    train, test = split(samples(rows), 0.05, seed=0)
    p = DispatchLevel(units=2).fit(train); p.predict(test[0])
    fit_all(dataset, out_dir)          # every predictor, saved as JSON with provenance
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from engine.latency.predictors.base import (
    GPU,
    Predictor,
    Sample,
    engine_fingerprint,
    label,
    metrics,
)
from engine.latency.predictors.dispatch import DispatchLevel
from engine.latency.predictors.flops import BetterFlops, FlopsLinear
from engine.latency.predictors.lut import LookupTable
from engine.latency.repeat import STATS

KINDS = ("lut", "flops", "better_flops", "xgboost", "dispatch")
FITTED_DIR = Path(__file__).resolve().parent.parent / "fitted"  # installed defaults

__all__ = ["KINDS", "BetterFlops", "DispatchLevel", "FlopsLinear", "LookupTable", "Predictor",
           "Sample", "engine_fingerprint", "fit_all", "load", "make", "metrics", "samples",
           "split"]  # fmt: skip


def make(kind: str, profile: dict | None = None) -> Predictor:
    """A fresh predictor of `kind` (the dispatch one takes the adapter's parallel units)."""
    if kind == "lut":
        return LookupTable()
    if kind == "flops":
        return FlopsLinear()
    if kind == "better_flops":
        return BetterFlops()
    if kind == "xgboost":
        from engine.latency.predictors.xgb import XGBoost

        return XGBoost()
    if kind == "dispatch":
        units = (profile or {}).get("limits", {}).get("parallel_units") or 1
        return DispatchLevel(units=units)
    raise ValueError(f"unknown predictor {kind!r}; one of {KINDS}")


def load(path: str | os.PathLike) -> Predictor:
    """A saved predictor (JSON; XGBoost reads its model file beside it)."""
    path = Path(path)
    doc = json.loads(path.read_text())
    kind = doc.pop("kind")
    params = doc.pop("params")
    p = make(kind)
    p.params, p.meta = params, doc
    if kind == "xgboost":
        p.load_model(path)
    return p


TARGETS = (*STATS, GPU)  # engine_<target>_ms: min, p10, median, mean (LETI's); gpu time


def samples(rows: list[dict], target: str = "mean") -> list[Sample]:
    """Measured rows as samples; y is the engine's `target` statistic of its run times, or
    (target "gpu") the GPU time of its profiled dispatches."""
    if target not in TARGETS:
        raise ValueError(f"target must be one of {TARGETS}, not {target!r}")
    if rows and all(label(r, target) is None for r in rows):
        if target == GPU:
            raise ValueError("the dataset has no per-dispatch GPU times (measured on an "
                             "adapter without timestamp queries, or --profile-runs 0)")  # fmt: skip
        raise ValueError(f"the dataset has no engine_{target}_ms (measured before the "
                         "round-robin protocol): --target mean or median")  # fmt: skip
    return [Sample.from_row(r, target) for r in rows if label(r, target)]


def split(items: list[Sample], train: float, seed: int = 0) -> tuple[list, list]:
    """(train, test) over the uniform sample: a seeded permutation, the first `train`
    fraction (at least 2 models) to fit, the rest held out."""
    import numpy as np

    pool = [s for s in items if s.tag == "uniform"]
    order = np.random.default_rng(seed).permutation(len(pool))
    n = max(2, round(train * len(pool)))
    return [pool[i] for i in order[:n]], [pool[i] for i in order[n:]]


def add_layers(items: list[Sample]) -> None:
    """Fill each cell sample's LUT layer keys (rebuilding its network)."""
    from engine.latency.builder import NetConfig, build_graph
    from engine.latency.cell import Cell
    from engine.latency.lut import layer_keys

    for s in items:
        if s.layers is None and s.adjacency:
            g = build_graph(Cell.make(s.adjacency, s.ops), NetConfig.from_dict(s.config))
            s.layers = layer_keys(g)


def fit_all(dataset: str | os.PathLike, out: str | os.PathLike, train: float = 0.05,
            seed: int = 0, kinds=KINDS, install: bool = False,
            target: str = "mean", kernels: str | None = None) -> list[Path]:  # fmt: skip
    """Fit every predictor on the `train` split of `dataset`; save them under `out`."""
    from engine.latency.dataset import profile_path, read_rows
    from engine.latency.lut import ops_path, read_table

    rows = read_rows(dataset)
    profile = json.loads(profile_path(dataset).read_text())
    fit_on, _ = split(samples(rows, target), train, seed)
    extra = samples(read_rows(kernels), target) if kernels else []
    if not fit_on:
        raise ValueError(f"{dataset}: no measured cells to fit on")
    precision = rows[0]["precision"]
    meta = {"adapter": profile["name"], "precision": precision, "engine": engine_fingerprint(),
            "fitted_on": {"dataset": str(dataset), "models": len(fit_on), "train": train,
                          "seed": seed, "target": target, "kernels": str(kernels or ""),
                          "engine_commit": rows[0]["engine_commit"]}}  # fmt: skip
    out = Path(out) / f"{profile['name']}-{precision}"
    paths = []
    for kind in kinds:
        p = make(kind, profile)
        if kind == "lut":
            p.params["table"] = read_table(ops_path(dataset))
        p.meta = dict(meta, profile=profile) if kind == "dispatch" else dict(meta)
        try:
            p.fit(fit_on, extra) if kind == "dispatch" else p.fit(fit_on)
        except ImportError as exc:
            print(f"skipped {kind}: {exc} (pip install 'webgpu-ar[latency]')")
            continue
        paths.append(p.save(out / f"{kind}.json"))
        if kind == "dispatch" and install:
            FITTED_DIR.mkdir(exist_ok=True)
            target = FITTED_DIR / f"{profile['name']}-{precision}.json"
            shutil.copyfile(paths[-1], target)
            paths.append(target)
    return paths
