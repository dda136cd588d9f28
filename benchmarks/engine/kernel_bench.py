"""GFLOP/s per kernel family on real models, and before/after A/B between two checkouts.

A family is a kind of layer, not a kernel name, so that a new kernel is compared with
the one it replaced: "conv first layer" (CONV_2D with C_in <= 4: the input image),
"conv1x1" (1x1 stride 1), "conv generic" (every other CONV_2D), "depthwise", "other".
Per model and storage kind: Engine.profile() (timestamp queries) `--repeats` times;
per family the median over repeats of its summed GPU ms, its FLOPs
(engine.model.cost) and GFLOP/s, and the kernels that ran it.

    python -m benchmarks.engine.kernel_bench MODEL... [--storage buffer,texture] [--repeats 5]
    python -m benchmarks.engine.kernel_bench MODEL... --baseline [--rounds 10]
        # before/after in one process: "before" engines built with this branch's kernel
        # changes switched off (`baseline()`: no conv_first, no per-class depthwise
        # tiles: the kernels as they were), profiled alternately with "after" ones
    python -m benchmarks.engine.kernel_bench MODEL... --ab OTHER_CHECKOUT [--rounds 4]
        # rounds alternate this checkout and OTHER_CHECKOUT (A B B A ...), each a fresh
        # process; per family the median over rounds, and the ratio before/after
        # (coarse: a busy machine's load moves between processes)

Adapters: VK_ICD_FILENAMES picks the Vulkan driver (scripts/fetch_swiftshader.sh for
SwiftShader; lavapipe otherwise). The report carries the stamp (benchmarks/common.py:
command, commit, adapter, the load before and after); with --ab, each round's process
reports its own load too.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from collections import defaultdict
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from benchmarks.common import ROOT, Bench, alternating, table
from engine.errors import EngineError

FAMILIES = ("conv first layer", "conv1x1", "conv generic", "depthwise", "other")


def family(graph, op) -> str:
    """The kernel family of `op` (see the module docstring)."""
    if op.type == "CONV_2D":
        w = graph.tensors[op.inputs[1]].shape
        if w[3] <= 4:
            return "conv first layer"
        if w[1:3] == (1, 1) and op.attrs.get("stride_h", 1) == op.attrs.get("stride_w", 1) == 1:
            return "conv1x1"
        return "conv generic"
    if op.type == "DEPTHWISE_CONV_2D":
        return "depthwise"
    if op.type == "DEPTHWISE_CONV_1X1":  # the two fused (engine/transforms/fuse_depthwise.py)
        return "depthwise + 1x1"
    return "other"


def profile_model(path: str, storage: str, repeats: int, precision: str = "fp32") -> dict:
    """Per family: flops, median GPU ms over `repeats` profiles, kernels; plus pipelines."""
    from engine.gpu.engine import Engine
    from engine.model.cost import op_flops
    from engine.model.importer import load_tflite
    from engine.tools.bench.engine_runner import random_feeds

    graph = load_tflite(path)
    engine = Engine(graph, storage=storage, precision=precision)
    feeds = random_feeds(graph)
    g = engine.graph
    fams = {i: family(g, op) for i, op in enumerate(g.ops)}
    flops: dict[str, int] = defaultdict(int)
    for i, op in enumerate(g.ops):
        flops[fams[i]] += op_flops(g, op)
    per_rep: dict[str, list[float]] = defaultdict(list)
    kernels: dict[str, set[str]] = defaultdict(set)
    totals = []
    engine.profile(feeds)  # warm-up: lazy driver compiles
    for _ in range(repeats):
        sums: dict[str, float] = defaultdict(float)
        for d in engine.profile(feeds):
            fam = fams.get(d.op_index, "other")
            sums[fam] += d.gpu_ms
            kernels[fam].add(d.kernel)
        for fam in FAMILIES:
            per_rep[fam].append(sums.get(fam, 0.0))
        totals.append(sum(sums.values()))
    out = {}
    for fam in FAMILIES:
        ms = float(np.median(per_rep[fam]))
        if flops.get(fam, 0) == 0 and ms == 0.0:
            continue
        out[fam] = {
            "flops": int(flops.get(fam, 0)),
            "gpu_ms": ms,
            "gflops_per_s": flops.get(fam, 0) / (ms * 1e6) if ms > 0 else None,
            "kernels": sorted(kernels[fam]),
        }
    return {
        "model": Path(path).stem,
        "storage": engine.storage,
        "adapter": engine.ctx.name,
        "total_gpu_ms": float(np.median(totals)),
        "pipelines": len(engine.pipeline_sources),
        "families": out,
    }


@contextmanager
def baseline():
    """Build engines with the kernels as they were before the per-class tile tables: conv_first declines
    every op, depthwise uses its old tile table, conv1x1 its own kernel on every class
    with up to 4 slices per invocation."""
    from engine.gpu.kernels import base, tile_tables

    first = [k for k in base.candidates("CONV_2D") if k.name == "conv_first"]
    saved = (
        dict(tile_tables.DEPTHWISE_TILES),
        dict(tile_tables.GEMM_TILES),
        dict(tile_tables.CONV1X1_SLICES),
        dict(tile_tables.CONV_SLICES),
    )
    for k in first:
        k.accepts = lambda op, graph: False
    tile_tables.DEPTHWISE_TILES.clear()
    tile_tables.GEMM_TILES.update(dict.fromkeys(tile_tables.GEMM_TILES))
    tile_tables.CONV1X1_SLICES.clear()
    tile_tables.CONV_SLICES.clear()
    try:
        yield
    finally:
        for k in first:
            del k.accepts
        tile_tables.DEPTHWISE_TILES.update(saved[0])
        tile_tables.GEMM_TILES.update(saved[1])
        tile_tables.CONV1X1_SLICES.update(saved[2])
        tile_tables.CONV_SLICES.update(saved[3])


def run_baseline(models: list[str], storages: list[str], rounds: int) -> dict:
    """Before/after engines of each model and storage in this process, profiled
    alternately (A B, B A, ...) `rounds` times; medians per family."""
    from engine.gpu.engine import Engine
    from engine.model.cost import op_flops
    from engine.model.importer import load_tflite
    from engine.tools.bench.engine_runner import random_feeds

    rows = []
    for path in models:
        graph = load_tflite(path)
        feeds = random_feeds(graph)
        for storage in storages:
            with baseline():
                engines = {"before": Engine(graph, storage=storage)}
            engines["after"] = Engine(graph, storage=storage)
            ms = {k: defaultdict(list) for k in engines}
            kernels = {k: defaultdict(set) for k in engines}
            for e in engines.values():
                e.profile(feeds)  # lazy driver compiles
            # profiles (GPU ms per family), not timed calls: interleave()'s order, this loop
            for _, label in alternating(("before", "after"), rounds):
                e = engines[label]
                sums = defaultdict(float)
                for d in e.profile(feeds):
                    fam = family(e.graph, e.graph.ops[d.op_index]) if d.op_index >= 0 else "other"
                    sums[fam] += d.gpu_ms
                    kernels[label][fam].add(d.kernel)
                for fam in (*FAMILIES, "total"):
                    ms[label][fam].append(sums[fam] if fam != "total" else sum(sums.values()))
            g = engines["after"].graph
            flops = defaultdict(int)
            for op in g.ops:
                flops[family(g, op)] += op_flops(g, op)
            for fam in (*FAMILIES, "total"):
                b, a = (float(np.median(ms[k][fam])) for k in ("before", "after"))
                if b == 0.0 and a == 0.0:
                    continue
                rows.append({"model": Path(path).stem, "storage": engines["after"].storage,
                             "family": fam, "flops": int(flops[fam]) if fam != "total" else 0,
                             "before_ms": b, "after_ms": a, "speedup": b / a if a else None,
                             "before_kernels": sorted(kernels["before"][fam]),
                             "after_kernels": sorted(kernels["after"][fam]),
                             "before_pipelines": len(engines["before"].pipeline_sources),
                             "after_pipelines": len(engines["after"].pipeline_sources)})  # fmt: skip
    return {"ab": rows, "rounds": rounds, "mode": "in-process baseline"}


def run_local(models: list[str], storages: list[str], repeats: int) -> dict:
    return {"rows": [profile_model(m, s, repeats) for m in models for s in storages]}


def _child(root: Path, models: list[str], storages: list[str], repeats: int) -> dict:
    """One round in a fresh process of the checkout at `root`."""
    cmd = [sys.executable, "-m", "benchmarks.engine.kernel_bench", *models]
    cmd += ["--storage", ",".join(storages), "--repeats", str(repeats), "--json", "-"]
    env = {**os.environ, "PYTHONPATH": str(root)}
    proc = subprocess.run(cmd, cwd=root, env=env, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["no message"])[-1]
        raise EngineError(f"{root}: exit {proc.returncode}: {last}")
    return json.loads(proc.stdout)


def run_ab(models, storages, repeats, before: Path, rounds: int) -> dict:
    """Rounds alternating `before` and this checkout (A B B A ...); medians per family."""
    roots = {"before": before, "after": ROOT}
    samples: dict[str, list[dict]] = {"before": [], "after": []}
    loads = []
    # a round is a fresh process per checkout: interleave()'s order, this loop
    for r, label in alternating(roots, rounds):
        print(f"kernel_bench: round {r + 1}/{rounds} {label}", file=sys.stderr, flush=True)
        res = _child(roots[label], models, storages, repeats)
        samples[label].append(res)
        # a checkout from before benchmarks/common.py reports its load outside a stamp
        loads.append(res["stamp"]["load"] if "stamp" in res else res["load"])
    # the adapter: the one this checkout's rounds ran on (the parent process uses none)
    return {"ab": _merge(samples), "loads": loads, "rounds": rounds, "mode": "checkouts",
            "adapter": samples["after"][0]["stamp"]["adapter"]}  # fmt: skip


def _merge(samples: dict[str, list[dict]]) -> list[dict]:
    """Per (model, storage, family): median ms over rounds for before and after."""
    table: dict[tuple, dict] = {}
    for label, results in samples.items():
        for res in results:
            for row in res["rows"]:
                for fam, f in row["families"].items():
                    key = (row["model"], row["storage"], fam)
                    e = table.setdefault(key, {"flops": f["flops"], "before": [], "after": []})
                    e[label].append(f["gpu_ms"])
                    e[f"{label}_kernels"] = f["kernels"]
                key = (row["model"], row["storage"], "total")
                e = table.setdefault(key, {"flops": 0, "before": [], "after": []})
                e[label].append(row["total_gpu_ms"])
                e[f"{label}_pipelines"] = row["pipelines"]
    out = []
    for (model, storage, fam), e in table.items():
        b = float(np.median(e["before"])) if e["before"] else None
        a = float(np.median(e["after"])) if e["after"] else None
        out.append({"model": model, "storage": storage, "family": fam, "flops": e["flops"],
                    "before_ms": b, "after_ms": a, "speedup": b / a if a and b else None,
                    **{k: v for k, v in e.items() if k.endswith(("kernels", "pipelines"))}})  # fmt: skip
    return out


AB_HEADER = ["model", "storage", "family", "GFLOP", "before ms", "after ms", "before GFLOP/s",
             "after GFLOP/s", "speedup", "kernels after"]  # fmt: skip
HEADER = ["model", "storage", "family", "GFLOP", "GPU ms", "GFLOP/s", "kernels"]


def markdown(res: dict) -> str:
    if "ab" in res:
        rows = []
        for r in res["ab"]:
            gf = r["flops"] / 1e9
            bg = gf / (r["before_ms"] / 1e3) if r["flops"] and r["before_ms"] else None
            ag = gf / (r["after_ms"] / 1e3) if r["flops"] and r["after_ms"] else None
            rows.append([r["model"], r["storage"], r["family"], f"{gf:.3f}", _f(r["before_ms"]),
                         _f(r["after_ms"]), _f(bg), _f(ag), _f(r["speedup"]), _what(r)])  # fmt: skip
        lines = [f"{res['rounds']} rounds ({res['mode']})", "", *table(AB_HEADER, rows)]
        if res["mode"] == "checkouts":
            loads = ", ".join(f"{ld['load_before'][0]:.2f}" for ld in res["loads"])
            lines.append(f"\nload (1-min) before each round: {loads}")
        return "\n".join(lines)
    rows = []
    for row in res["rows"]:
        for fam, f in row["families"].items():
            rows.append([row["model"], row["storage"], fam, f"{f['flops'] / 1e9:.3f}",
                         _f(f["gpu_ms"]), _f(f["gflops_per_s"]), ",".join(f["kernels"])])  # fmt: skip
        rows.append([row["model"], row["storage"], "total", "", _f(row["total_gpu_ms"]), "",
                     f"{row['pipelines']} pipelines"])  # fmt: skip
    return "\n".join(table(HEADER, rows))


def _what(r: dict) -> str:
    """The kernels that ran a family after; for a total, pipelines before -> after."""
    if r["family"] == "total":
        return f"pipelines {r.get('before_pipelines', '?')} -> {r.get('after_pipelines', '?')}"
    return ",".join(r.get("after_kernels", []))


def _f(v) -> str:
    return "—" if v is None else f"{v:.3g}" if v < 100 else f"{v:.0f}"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="kernel_bench", description=__doc__.splitlines()[0])
    p.add_argument("models", nargs="+")
    p.add_argument("--storage", default="buffer,texture")
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--ab", type=Path, help="the 'before' checkout (its repository root)")
    p.add_argument("--baseline", action="store_true", help="before/after in this process")
    p.add_argument("--rounds", type=int, default=4)
    p.add_argument("--json", help="write JSON here ('-': stdout, no markdown)")
    args = p.parse_args(argv)
    storages = [s.strip() for s in args.storage.split(",") if s.strip()]
    if not storages or not set(storages) <= {"buffer", "texture"}:
        p.error(f"--storage {args.storage!r}: a comma list of buffer, texture")
    if min(args.repeats, args.rounds) < 1:
        p.error("--repeats and --rounds must be at least 1")
    if args.ab and not (args.ab / "engine").is_dir():
        p.error(f"--ab {args.ab}: not a checkout of this project (no engine/ folder)")
    models = [str(Path(m).resolve()) for m in args.models]
    try:
        return _run(args, models, storages, argv)
    except EngineError as exc:  # a missing or unsupported model, no adapter: one line
        print(f"kernel_bench: {exc}", file=sys.stderr)
        return 2


def _run(args, models: list[str], storages: list[str], argv: list[str] | None) -> int:
    bench = Bench(__spec__.name, argv)
    if not args.ab:  # in this process: the adapter this process runs on
        from engine.gpu import shared_context

        bench.use(shared_context())
    if args.baseline:
        res = run_baseline(models, storages, args.rounds)
    elif args.ab:
        res = run_ab(models, storages, args.repeats, args.ab.resolve(), args.rounds)
        bench.adapter = res.pop("adapter")
    else:
        res = run_local(models, storages, args.repeats)
    if args.json == "-":  # a round of another process's --ab: the document alone
        print(json.dumps(bench.document(res)))
        return 0
    bench.report(markdown(res), res, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
