"""engine-bench --workgroups: work group policies per kernel signature and per model.

For each distinct conv / depthwise signature of a model (engine/gpu/kernels/workgroup_choice.py
records them while the engine compiles): the GPU time (timestamp queries, median of
`runs`) of the table's choice, the heuristic's, neighbourhood descent's and the
exhaustive best; the fraction of timed candidates within 15% of the best; the
selection time of each policy. Exhaustive tuning of every candidate takes minutes per
model on lavapipe (up to ~900 candidates per signature), so it times a deterministic
sample of at most `sample` candidates (every k-th of the candidate order) plus the
other policies' choices; its selection time is extrapolated to the whole set.
Then the whole-model latency (median of interleaved runs) under table, heuristic and
tune (descent and the exhaustive-sample best, through a warm TuneCache).
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

NEAR = 0.15  # "within 15% of the best"
FINALISTS = 3  # the search's fastest candidates re-timed against the policies' picks
FINAL_ROUNDS = 5  # interleaved rounds of re-timing
FINAL_REPEAT = 8  # dispatches per timed pass in the re-timing (small kernels: less jitter)


def _interleaved(engine, make, cands: list, runs: int) -> dict:
    """Median ms per candidate over FINAL_ROUNDS interleaved rounds of `runs` timings of
    FINAL_REPEAT back-to-back dispatches (after one untimed warm-up run each), so that
    drift hits all of them alike."""
    dispatches = {c: make(c) for c in cands}
    for d in dispatches.values():
        engine.time_dispatch(d)
    samples: dict = {c: [] for c in cands}
    for _ in range(FINAL_ROUNDS):
        for c, d in dispatches.items():
            samples[c] += [engine.time_dispatch(d, FINAL_REPEAT) for _ in range(runs)]
    return {c: statistics.median(v) for c, v in samples.items()}


def _sample(pool: list, n: int) -> list:
    if len(pool) <= n:
        return list(pool)
    step = len(pool) / n
    return [pool[int(i * step)] for i in range(n)]


def signature_rows(engine, *, runs: int = 3, sample: int = 24, max_sigs: int | None = None):
    """Per distinct tunable signature of `engine` (compiled with any policy): a dict row,
    plus the descent and exhaustive-sample results (sig -> Tuned) for the latency runs."""
    from engine.gpu.workgroups import Tuned, candidates, heuristic, table, tune
    from engine.gpu.workgroups.spec import Choice

    limits = engine.target.workgroups
    seen, rows, descent, exhaustive = set(), [], {}, {}
    for sig, table_c, _, make in engine.workgroup_choices:
        if sig.key() in seen or (max_sigs is not None and len(seen) >= max_sigs):
            continue
        seen.add(sig.key())
        times: dict = {}
        spent = [0.0]

        def measure(c, make=make, times=times, spent=spent):
            if c not in times:
                t0 = time.perf_counter()
                times[c] = statistics.median(engine.time_dispatch(make(c)) for _ in range(runs))
                spent[0] += time.perf_counter() - t0
            return times[c]

        t0 = time.perf_counter()
        table(sig, limits)
        sel_table = time.perf_counter() - t0
        t0 = time.perf_counter()
        heur = heuristic(sig, limits).candidate
        sel_heur = time.perf_counter() - t0
        t0 = time.perf_counter()
        tuned = tune(sig, limits, measure, method="descent", runs=1)
        sel_descent = time.perf_counter() - t0
        descent[sig] = tuned
        pool = candidates(sig, limits)
        timed_before = len(times)
        spent_before = spent[0]
        picked = _sample(pool, sample)
        for c in (*picked, table_c, heur, tuned.choice.candidate):
            measure(c)
        per = (spent[0] - spent_before) / max(1, len(times) - timed_before)
        finite = {c: t for c, t in times.items() if np.isfinite(t)}
        # The search's times are one median of `runs` each, the first of them taken on a
        # cold pipeline and caches: re-time the contenders (the search's FINALISTS best,
        # table, heuristic, descent's pick) side by side, interleaved, FINAL_ROUNDS times,
        # and compare those medians.
        contenders = sorted(finite, key=finite.get)[:FINALISTS]
        contenders = list(dict.fromkeys((*contenders, table_c, heur, tuned.choice.candidate)))
        final = _interleaved(engine, make, [c for c in contenders if c in finite], runs)
        best_c = min(final, key=final.get)
        best = final[best_c]
        exhaustive[sig] = Tuned(Choice.of(best_c, "tuned"), best, len(times))
        # the latency distribution, on the search's own times
        sampled = [finite[c] for c in picked if c in finite]
        search_best = min(finite.values())
        print(
            f"engine-bench: {sig.kernel} {sig.space}: descent {tuned.timed} timed "
            f"{sel_descent:.1f} s, sample {len(picked)} {spent[0] - spent_before:.1f} s",
            file=sys.stderr,
            flush=True,
        )
        rows.append(
            {
                "kernel": sig.kernel,
                "space": "x".join(map(str, sig.space)),
                "params": dict(sig.params).get("k", ""),
                "candidates": len(pool),
                "table_ms": final[table_c],
                "heuristic_ms": final[heur],
                "descent_ms": final[tuned.choice.candidate],
                "best_ms": best,
                "heuristic_vs_best": final[heur] / best,
                "table_vs_best": final[table_c] / best,
                "within_15pct": sum(t <= search_best * (1 + NEAR) for t in sampled)
                / max(1, len(sampled)),
                "table": _text(table_c),
                "heuristic": _text(heur),
                "descent": _text(tuned.choice),
                "best": _text(best_c),
                "select_table_ms": sel_table * 1e3,
                "select_heuristic_ms": sel_heur * 1e3,
                "select_descent_ms": sel_descent * 1e3,
                "descent_timed": tuned.timed,
                "select_exhaustive_ms_est": per * len(pool) * 1e3,
                "exhaustive_timed": len(picked),
            }
        )
    return rows, descent, exhaustive


def _text(c) -> str:
    return "x".join(map(str, c.workgroup)) + "/" + c.work.text()


def model_latency(graph, caches: dict, runs: int = 30, warmup: int = 3) -> dict:
    """Median ms of a whole run under table, heuristic and each warm tune cache
    (label -> (directory, method)), interleaved."""
    from engine.gpu.engine import Engine

    engines = {"table": Engine(graph, workgroups="table")}
    misses: dict[str, int] = {}
    engines["heuristic"] = Engine(graph, workgroups="heuristic")
    for label, (directory, method) in caches.items():
        # Warm: every signature was tuned above (a miss, if any, is tuned here and counted).
        e = Engine(graph, workgroups="tune", tune_method=method, cache_dir=directory)
        misses[label] = e.tune_stats["timed"]
        engines[label] = e
    rng = np.random.default_rng(0)
    g = engines["table"].graph
    feeds = {
        g.tensors[t].name: rng.uniform(-1, 1, g.tensors[t].shape).astype(np.float32)
        for t in g.inputs
    }
    want = engines["table"].run(feeds)
    for label, e in engines.items():
        got = e.run(feeds)
        for name, ref in want.items():
            scale = max(1e-30, float(np.abs(ref).max()))
            if float(np.abs(got[name] - ref).max()) > 1e-6 * scale:
                raise RuntimeError(f"{label}: output {name} differs from table's")
        for _ in range(warmup):
            e.run(feeds)
    samples: dict[str, list[float]] = {k: [] for k in engines}
    for _ in range(runs):
        for label, e in engines.items():
            t0 = time.perf_counter()
            e.run(feeds)
            samples[label].append((time.perf_counter() - t0) * 1e3)
    return {k: statistics.median(v) for k, v in samples.items()}, misses


def bench_workgroups(
    paths: list[Path], *, runs: int = 3, sample: int = 24, latency_runs: int = 30
) -> dict:
    """The --workgroups report: {model: {"signatures": rows, "latency_ms": {...}}}."""
    from engine.gpu.engine import Engine
    from engine.gpu.workgroups import AdapterKey, TuneCache
    from engine.model.importer import load_tflite

    report = {}
    for path in paths:
        graph = load_tflite(Path(path))
        t0 = time.perf_counter()
        engine = Engine(graph, workgroups="table")
        rows, descent, exhaustive = signature_rows(engine, runs=runs, sample=sample)
        tmp = Path(tempfile.mkdtemp(prefix="wg-bench-"))
        caches = {}
        for label, results, method in (
            ("tune-descent", descent, "descent"),
            ("tune-best", exhaustive, "exhaustive"),
        ):
            directory = tmp / label
            cache = TuneCache(AdapterKey.from_info(engine.ctx.info), directory / "workgroups")
            for sig, tuned in results.items():
                cache.put(sig, tuned, method)
            caches[label] = (directory, method)
        latency, misses = model_latency(graph, caches, runs=latency_runs)
        report[Path(path).stem] = {
            "signatures": rows,
            "latency_ms": latency,
            "warm_cache_misses": misses,
            "bench_s": time.perf_counter() - t0,
        }
    return report


def markdown_report(report: dict) -> str:
    lines = []
    for model, r in report.items():
        rows = r["signatures"]
        lines += [
            f"### {model} ({len(rows)} signatures, {r['bench_s']:.0f} s)",
            "",
            "| kernel | space | k | cands | table ms | heur ms | descent ms | best ms "
            "| heur/best | within 15% | heuristic | best | select heur ms | descent ms (n) "
            "| exhaustive est. ms |",
            "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- "
            "| ---: | ---: | ---: |",
        ]
        for x in rows:
            lines.append(
                f"| {x['kernel']} | {x['space']} | {x['params']} | {x['candidates']} "
                f"| {x['table_ms']:.3f} | {x['heuristic_ms']:.3f} | {x['descent_ms']:.3f} "
                f"| {x['best_ms']:.3f} | {x['heuristic_vs_best']:.2f} "
                f"| {x['within_15pct']:.0%} | {x['heuristic']} | {x['best']} "
                f"| {x['select_heuristic_ms']:.1f} | {x['select_descent_ms']:.0f} "
                f"({x['descent_timed']}) | {x['select_exhaustive_ms_est']:.0f} |"
            )
        n = len(rows)
        h10 = sum(x["heuristic_vs_best"] <= 1.10 for x in rows)
        t10 = sum(x["table_vs_best"] <= 1.10 for x in rows)
        lat = ", ".join(f"{k} {v:.2f}" for k, v in r["latency_ms"].items())
        lines += [
            "",
            f"heuristic within 10% of best: {h10}/{n}; table within 10%: {t10}/{n}; "
            f"whole-model latency (median ms): {lat}",
            "",
        ]
    return "\n".join(lines)
