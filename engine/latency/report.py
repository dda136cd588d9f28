"""engine-latency report: every predictor on the same splits, LETI's Table 2 style.

Writes <out>/report.md, <out>/report.json and one scatter plot per predictor
(<out>/scatter_<kind>.png: measured vs predicted on the 5% split's test cells, +-10%
lines; needs matplotlib). Sections:
- splits: 5% and 50% of the uniform cells to fit, the rest to test (one seed);
- held-out architectures: fit on cells of <= 5 vertices, test on 6-7;
- noise floor: a second measurement of some cells (`--repeat`) against the first,
  Acc@ within the same tolerances: no predictor can beat it; and per statistic of the
  runs (min, p10, median, mean), the share of cells that agree (repeat.py);
- beyond the space: the dispatch-level predictor fitted on all uniform cells predicts
  every model of a measured models/ dataset (`--models`);
- adaptation (`--second`: the same cells measured on another adapter class): the
  dispatch-level predictor fitted on this class's 50% split, carried to the other with
  10 and 100 of its models (DispatchLevel.adapted), against one fitted on those models
  alone; both tested on the other class's cells outside this class's training half.
The label (`target`): a statistic of run() or "gpu", the GPU time of the dispatch list.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import numpy as np

from engine.latency.predictors import (
    KINDS,
    add_layers,
    engine_fingerprint,
    make,
    metrics,
    samples,
    split,
)
from engine.latency.predictors.base import label, within
from engine.latency.repeat import agreement
from engine.latency.repeat import markdown as repeat_markdown

TABLE_KINDS = ("lut", "flops", "better_flops", "xgboost", "dispatch-families", "dispatch",
               "dispatch+kernels")  # fmt: skip
NAMES = {"lut": "(a) look-up table", "flops": "(b) FLOPs", "better_flops": "(c) Better FLOPs",
         "xgboost": "(d) XGBoost (58 features)",
         "dispatch-families": "(e-) dispatch-level, family models only",
         "dispatch": "(e) dispatch-level (ours)",
         "dispatch+kernels": "(e+) dispatch-level + generated kernels"}  # fmt: skip


def fit_predict(kind: str, train, test, profile: dict, table: dict,
                kernels=()) -> list[float] | None:  # fmt: skip
    """Predictions for `test` by a `kind` predictor fitted on `train` (None: unavailable)."""
    if kind == "dispatch+kernels":
        if not kernels:
            return None
        return make("dispatch", profile).fit(train, kernels).predict_many(test)
    if kind == "dispatch-families":  # without the measured dispatches: what they add
        return make("dispatch", profile).fit(train, measured=False).predict_many(test)
    p = make(kind, profile)
    if kind == "lut":
        if not table:
            return None
        p.params["table"] = table
    try:
        p.fit(train)
    except ImportError:
        return None
    return p.predict_many(test)


def evaluate(train, test, profile: dict, table: dict, kernels=(), kinds=TABLE_KINDS) -> dict:
    out = {}
    for kind in kinds:
        preds = fit_predict(kind, train, test, profile, table, kernels)
        if preds is not None:
            out[kind] = {"metrics": metrics(preds, [s.y for s in test]), "preds": preds,
                         "trues": [s.y for s in test], "train": len(train)}  # fmt: skip
    return out


def kernel_accuracy(train, test, profile: dict, kernels=()) -> dict:
    """Per kernel family: the fitted per-dispatch model (the family's, measured dispatches
    aside) against the profiled GPU times of the test cells' dispatches (before the
    model-level scale): n, Acc@±10%, MAPE."""
    p = make("dispatch", profile).fit(train, kernels, measured=False)  # the families' own
    by: dict[str, list] = {}
    for s in test:
        for d, ms in zip(s.dispatches, s.dispatch_ms or [], strict=False):
            if ms:
                by.setdefault(d.kernel, []).append((p.kernel_ms(d), ms))
    return {k: {"n": len(v), "acc10": sum(within(a, b, 0.10) for a, b in v) / len(v),
                "mape": 100 * sum(abs(a - b) / b for a, b in v) / len(v)}
            for k, v in sorted(by.items())}  # fmt: skip


ADAPT_SAMPLES = (10, 100)


def adaptation(first, second, profile: dict, seed: int = 0) -> dict:
    """Carrying the dispatch-level predictor from `first`'s adapter class to `second`'s
    (both: samples of the same label): {k: {"adapted": metrics, "alone": metrics}}."""
    train, _ = split(first, 0.5, seed)
    seen = {s.hash for s in train}
    pool = [s for s in second if s.tag == "uniform"]
    order = np.random.default_rng(seed).permutation(len(pool))
    few = [pool[i] for i in order if pool[i].hash in seen]
    test = [s for s in pool if s.hash not in seen]
    base = make("dispatch", profile).fit(train)
    trues = [s.y for s in test]
    out = {"test": len(test), "as_is": metrics(base.predict_many(test), trues)}
    for k in ADAPT_SAMPLES:
        if len(few) < k:
            continue
        alone = make("dispatch", profile).fit(few[:k])
        out[k] = {"adapted": metrics(base.adapted(few[:k]).predict_many(test), trues),
                  "alone": metrics(alone.predict_many(test), trues)}  # fmt: skip
    return out


def noise_floor(first: list[dict], second: list[dict], target: str = "mean") -> dict:
    """Acc@ of a repeated measurement of the same cells against the first one."""
    a = {(r["hash"], r["precision"]): label(r, target) for r in first}
    pairs = [(label(r, target), a[(r["hash"], r["precision"])]) for r in second
             if a.get((r["hash"], r["precision"])) and label(r, target)]  # fmt: skip
    if not pairs:
        return {}
    return metrics([p for p, _ in pairs], [t for _, t in pairs])


def beyond_space(cells, models: list[dict], profile: dict, target: str = "mean",
                 kernels=()) -> list[dict]:  # fmt: skip
    """Dispatch-level predictor fitted on every uniform cell (and the generated kernels),
    on each measured model."""
    from engine.latency.predictors.base import Sample

    p = make("dispatch", profile).fit([s for s in cells if s.tag == "uniform"], kernels)
    rows = []
    for r in models:
        if label(r, target) is None:  # e.g. --target gpu on a row without dispatch times
            continue
        s = Sample.from_row(r, target)
        pred = p.predict(s)
        rows.append({"model": r["model"], "measured_ms": s.y, "predicted_ms": pred,
                     "error_pct": 100 * (pred - s.y) / s.y,
                     "dispatches": r["dispatches"]})  # fmt: skip
    return rows


def write_report(dataset: str | os.PathLike, out: str | os.PathLike, seed: int = 0,
                 models: str | None = None, repeat: str | None = None,
                 target: str = "mean", kernels: str | None = None,
                 second: str | None = None) -> list[Path]:  # fmt: skip
    from engine.latency.dataset import profile_path, read_rows
    from engine.latency.lut import ops_path, read_table

    rows = read_rows(dataset)
    profile = json.loads(profile_path(dataset).read_text())
    table = read_table(ops_path(dataset))
    items = samples(rows, target)
    extra = samples(read_rows(kernels), target) if kernels else []
    if table:
        add_layers(items)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    doc: dict = {"dataset": str(dataset), "rows": len(rows), "adapter": profile["name"],
                 "driver": profile["driver"], "engine": engine_fingerprint(),
                 "engine_commit": sorted({r["engine_commit"] for r in rows}),
                 "load_avg": _load_summary(rows), "target": target, "splits": {}}  # fmt: skip
    results = {}
    for frac in (0.05, 0.5):
        train, test = split(items, frac, seed)
        results[frac] = evaluate(train, test, profile, table, extra)
        doc["splits"][f"{frac:g}"] = {k: v["metrics"] | {"train": v["train"]}
                                      for k, v in results[frac].items()}  # fmt: skip
    train, test = split(items, 0.5, seed)
    doc["kernel_accuracy"] = kernel_accuracy(train, test, profile, extra)
    small = [s for s in items if s.vertices is not None and s.vertices <= 5]
    large = [s for s in items if s.vertices is not None and s.vertices >= 6 and s.tag == "uniform"]
    if len(small) >= 5 and large:
        held = evaluate(small, large, profile, table, extra)
        doc["held_out"] = {k: v["metrics"] | {"train": v["train"]} for k, v in held.items()}
    doc["run_std_over_mean"] = _median([r["engine_std_ms"] / r["engine_mean_ms"] for r in rows
                                        if r["engine_mean_ms"]])  # fmt: skip
    if repeat:
        again = read_rows(repeat)
        doc["noise_floor"] = noise_floor(rows, again, target)
        doc["repeat_agreement"] = agreement(rows, again)
    if models:
        doc["beyond_space"] = beyond_space(items, read_rows(models), profile, target, extra)
        doc["beyond_space_kernels"] = len(extra)
    if second:
        other = read_rows(second)
        doc["adaptation"] = {"second": str(second),
                             "adapter": json.loads(profile_path(second).read_text())["name"],
                             **adaptation(items, samples(other, target), profile, seed)}  # fmt: skip
    paths = [out / "report.json", out / "report.md"]
    paths[0].write_text(json.dumps(doc, indent=1) + "\n")
    paths[1].write_text(markdown(doc))
    paths += scatter_plots(results.get(0.05, {}), out)
    return paths


def _median(xs: list[float]) -> float:
    xs = sorted(xs)
    return xs[len(xs) // 2] if xs else math.nan


def _load_summary(rows: list[dict]) -> dict:
    loads = sorted(r["load_avg"] for r in rows if r.get("load_avg") is not None)
    if not loads:
        return {}
    return {"min": loads[0], "median": loads[len(loads) // 2], "max": loads[-1]}


def _target_words(target: str) -> str:
    if target == "gpu":
        return "the GPU time of the dispatch list (its profiled dispatches summed)"
    return f"the engine's {target} run() time"


def _table(title: str, results: dict) -> list[str]:
    lines = [f"### {title}", "", "| predictor | train | Acc@±1% | Acc@±5% | Acc@±10% | RMSE (ms) | MAPE |",
             "|---|---:|---:|---:|---:|---:|---:|"]  # fmt: skip
    for kind in TABLE_KINDS:
        if kind in results:
            m = results[kind]
            lines.append(f"| {NAMES[kind]} | {m['train']} | {100 * m['acc1']:.1f}% | "
                         f"{100 * m['acc5']:.1f}% | {100 * m['acc10']:.1f}% | "
                         f"{m['rmse_ms']:.3f} | {m['mape']:.1f}% |")  # fmt: skip
    return lines + [""]


def markdown(doc: dict) -> str:
    lines = [f"# Latency predictors on {doc['adapter']} ({doc['driver']})", "",
             f"Dataset {doc['dataset']}: {doc['rows']} rows, target: {_target_words(doc['target'])}; "
             f"engine {doc['engine']} "
             f"(commits {', '.join(doc['engine_commit'])}); load average during measurement "
             f"{doc['load_avg']}; median run std/mean {100 * doc['run_std_over_mean']:.1f}%.", ""]  # fmt: skip
    for frac, res in doc["splits"].items():
        n = next(iter(res.values()))["n"] if res else 0
        lines += _table(f"{float(frac):.0%} training, {n} held-out cells", res)
    if "held_out" in doc:
        lines += _table(
            "Held-out architectures: fit on <= 5 vertices, test on 6-7", doc["held_out"]
        )
    if doc.get("kernel_accuracy"):
        lines += ["### Per-kernel family models against profiled dispatch times (50% split, "
                  "test cells; measured dispatches aside)",
                  "", "| kernel | dispatches | Acc@±10% | MAPE |", "|---|---:|---:|---:|"]  # fmt: skip
        for k, m in doc["kernel_accuracy"].items():
            lines.append(f"| {k} | {m['n']} | {100 * m['acc10']:.1f}% | {m['mape']:.1f}% |")
        lines.append("")
    if doc.get("noise_floor"):
        m = doc["noise_floor"]
        lines += ["### Noise floor (a second measurement against the first)", "",
                  f"{m['n']} cells: Acc@±1% {100 * m['acc1']:.1f}%, Acc@±5% {100 * m['acc5']:.1f}%, "
                  f"Acc@±10% {100 * m['acc10']:.1f}%, RMSE {m['rmse_ms']:.3f} ms", ""]  # fmt: skip
    if doc.get("repeat_agreement"):
        lines += ["### Which statistic repeats (cells whose second measurement agrees)", "",
                  repeat_markdown(doc["repeat_agreement"]), ""]  # fmt: skip
    if doc.get("beyond_space"):
        lines += ["### Beyond the training space (dispatch-level, fitted on generated cells "
                  f"and {doc.get('beyond_space_kernels', 0)} generated single-layer models only)",
                  "", "| model | dispatches | measured (ms) | predicted (ms) | error |",
                  "|---|---:|---:|---:|---:|"]  # fmt: skip
        for r in doc["beyond_space"]:
            lines.append(f"| {r['model']} | {r['dispatches']} | {r['measured_ms']:.2f} | "
                         f"{r['predicted_ms']:.2f} | {r['error_pct']:+.1f}% |")  # fmt: skip
        lines.append("")
    if doc.get("adaptation"):
        lines += _adaptation_table(doc["adaptation"])
    return "\n".join(lines)


def _adaptation_table(a: dict) -> list[str]:
    lines = [f"### Adaptation to {a['adapter']} ({a['second']}: {a['test']} test cells)", "",
             "| predictor | Acc@±5% | Acc@±10% | MAPE |", "|---|---:|---:|---:|"]  # fmt: skip

    def row(name: str, m: dict) -> str:
        return f"| {name} | {100 * m['acc5']:.1f}% | {100 * m['acc10']:.1f}% | {m['mape']:.1f}% |"

    lines.append(row("this class's predictor as is", a["as_is"]))
    for k in ADAPT_SAMPLES:
        if str(k) in a or k in a:
            r = a.get(k) or a[str(k)]
            lines.append(row(f"adapted with {k} models", r["adapted"]))
            lines.append(row(f"fitted on those {k} alone", r["alone"]))
    return lines + [""]


def scatter_plots(results: dict, out: Path) -> list[Path]:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.ticker import LogLocator, NullFormatter, ScalarFormatter
    except ImportError:
        return []
    paths = []
    for kind, r in results.items():
        fig, ax = plt.subplots(figsize=(4.2, 4.2), dpi=110)
        t = r["trues"]
        p = [x if math.isfinite(x) and x > 0 else float("nan") for x in r["preds"]]
        ok = [within(a, b, 0.10) for a, b in zip(p, t, strict=True)]
        ax.scatter(t, p, s=6, c=["tab:blue" if k else "tab:red" for k in ok], alpha=0.6)
        lo, hi = min(t) * 0.9, max(t) * 1.1
        ax.plot([lo, hi], [lo, hi], "k-", lw=0.8)
        for f in (0.9, 1.1):
            ax.plot([lo, hi], [lo * f, hi * f], "k:", lw=0.6)
        ax.set_xscale("log")
        ax.set_yscale("log")
        for axis in (ax.xaxis, ax.yaxis):  # plain "2", "5", "10": log minor labels overlap
            axis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
            axis.set_major_formatter(ScalarFormatter())
            axis.set_minor_formatter(NullFormatter())
        ax.set(xlim=(lo, hi), ylim=(lo, hi), xlabel="measured (ms)", ylabel="predicted (ms)",
               title=f"{NAMES[kind]}\nAcc@±10% {100 * r['metrics']['acc10']:.1f}%")  # fmt: skip
        fig.tight_layout()
        path = out / f"scatter_{kind.replace('+', '_')}.png"
        fig.savefig(path)
        plt.close(fig)
        paths.append(path)
    return paths


assert set(TABLE_KINDS) == {*KINDS, "dispatch+kernels", "dispatch-families"}
