"""Tile tables for this adapter's class, measured on real models: GEMM, depthwise, reduce,
fused depthwise + 1x1.

The tile tables (engine/gpu/kernels/tile_tables.py) hold one row per adapter class. This tool
measures candidate rows for the class of the adapter it runs on, in one process:
- a variant replaces one table row (GEMM_TILES[class], REDUCE_TILES[class],
  FUSED_TILES[class] (None: no fusion), or DEPTHWISE_TILES[(class, k, s)] for k in 3, 5
  and s in 1, 2) and builds an Engine per model with it;
- rounds alternate the variants' order (forwards, then backwards), one Engine.profile()
  (timestamp queries) per variant per round;
- per variant: the medians over rounds of the conv1x1, depthwise, fused depthwise + 1x1
  and other (global pools among them) families' GPU ms, of the whole run's GPU ms and of a run() (numpy in,
  outputs read back), the pipelines, and the largest output difference from the
  table's own engine (a wrong tile is an error, not a speed-up).

    python -m benchmarks.engine.tile_sweep MODEL... [--storage buffer] [--rounds 9]
        [--only gemm|depthwise|reduce|fused] [--variants A,B] [--json F]

The adapter is this process's (VK_ICD_FILENAMES, ENGINE_ADAPTER). Timings decide
nothing here: a winning row is copied into tile_tables.py by hand, with these figures as its
provenance, so defaults stay deterministic.
"""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from benchmarks.common import alternating, table, timed
from benchmarks.engine.kernel_bench import family
from benchmarks.engine.sweep import run_sweeps
from engine.gpu.kernels.tile_tables import FusedTile, GemmTile, ReduceTile

# name -> (table, row) for the adapter's class: "gemm" GEMM_TILES (None: conv1x1's own
# per-invocation kernel), "depthwise" DEPTHWISE_TILES for k in (3, 5) and stride in (1, 2)
# (None: no row, the work group selector's shapes), "reduce" REDUCE_TILES. "table": the
# class's own rows. The H100 sweeps of docs/benchmarks.md ("Real GPU"): the first ran
# "conv1x1 kernel" to "gemm 128x2x2 k8" and "depthwise none" to "depthwise 4x4" below;
# the second and third its neighbours, from "gemm 128x2x2 k8 storage" on.
VARIANTS: dict[str, tuple[tuple[str, object], ...]] = {
    "conv1x1 kernel": (("gemm", None),),
    "gemm 64x4x4 k4": (("gemm", GemmTile(64, 4, 4, shared_k=4)),),
    "gemm 64x4x4": (("gemm", GemmTile(64, 4, 4)),),
    "gemm 64x4x4 k4 storage": (("gemm", GemmTile(64, 4, 4, shared_k=4, uniform=False)),),
    "gemm 128x4x4 k4": (("gemm", GemmTile(128, 4, 4, shared_k=4)),),
    "gemm 32x4x4 k4": (("gemm", GemmTile(32, 4, 4, shared_k=4)),),
    "gemm 64x8x4 k4": (("gemm", GemmTile(64, 8, 4, shared_k=4)),),
    "gemm 64x2x4 k4": (("gemm", GemmTile(64, 2, 4, shared_k=4)),),
    "gemm 64x4x2 k4": (("gemm", GemmTile(64, 4, 2, shared_k=4)),),
    "gemm 128x2x2 k8": (("gemm", GemmTile(128, 2, 2, shared_k=8)),),
    "gemm 128x2x2 k8 storage": (("gemm", GemmTile(128, 2, 2, shared_k=8, uniform=False)),),
    "gemm 128x2x2": (("gemm", GemmTile(128, 2, 2)),),
    "gemm 128x1x2 k8": (("gemm", GemmTile(128, 1, 2, shared_k=8)),),
    "gemm 128x2x1 k8": (("gemm", GemmTile(128, 2, 1, shared_k=8)),),
    "gemm 64x2x2 k8": (("gemm", GemmTile(64, 2, 2, shared_k=8)),),
    "gemm 256x1x2 k8": (("gemm", GemmTile(256, 1, 2, shared_k=8)),),
    "gemm 128x2x2 k16": (("gemm", GemmTile(128, 2, 2, shared_k=16)),),
    "gemm 64x4x2 k4 storage": (("gemm", GemmTile(64, 4, 2, shared_k=4, uniform=False)),),
    "depthwise none": (("depthwise", None),),
    "depthwise 1x1": (("depthwise", (1, 1)),),
    "depthwise 2x2": (("depthwise", (2, 2)),),
    "depthwise 4x2": (("depthwise", (4, 2)),),
    "depthwise 4x4": (("depthwise", (4, 4)),),
    "depthwise 1x2": (("depthwise", (1, 2)),),
    "depthwise 2x1": (("depthwise", (2, 1)),),
    "reduce 1024/16": (("reduce", ReduceTile(1024, 16)),),
    "reduce 64/64": (("reduce", ReduceTile(64, 64)),),
    "reduce 64/256": (("reduce", ReduceTile(64, 256)),),
    "reduce 256/1024": (("reduce", ReduceTile(256, 1024)),),
    # depthwise + 1x1 fused (engine/transforms/fuse_depthwise.py) or not, tile rows
    "fused none": (("fused", None),),
    "fused 64/16 4x4": (("fused", FusedTile(64, 16, 4, 4, 64)),),
    "fused 128/2 4x4": (("fused", FusedTile(128, 2, 4, 4, 64)),),
    "fused 64/64 2x2": (("fused", FusedTile(64, 64, 2, 2, 64)),),
    "fused 32/64 2x2": (("fused", FusedTile(32, 64, 2, 2, 64)),),
    "fused 128/32 4x2 wg128": (("fused", FusedTile(128, 32, 4, 2, 128)),),
    "fused 64/128 1x2": (("fused", FusedTile(64, 128, 1, 2, 64)),),
    "fused 16/128 1x1 wg32": (("fused", FusedTile(16, 128, 1, 1, 32)),),
    # the gpu class's rows before the first H100 sweep: whole models, old vs new
    "first table": (
        ("gemm", GemmTile(64, 4, 4, shared_k=4)),
        ("depthwise", None),
        ("reduce", ReduceTile(1024, 16)),
    ),
}
TABLES = ("gemm", "depthwise", "reduce", "fused")
FAMILIES = ("conv1x1", "depthwise", "depthwise + 1x1", "other")  # kernel_bench.family


@contextmanager
def variant(adapter: str, name: str):
    """The tile tables with `adapter`'s row replaced by variant `name` ("table": none)."""
    from engine.gpu.kernels import tile_tables

    live = (
        tile_tables.GEMM_TILES,
        tile_tables.DEPTHWISE_TILES,
        tile_tables.REDUCE_TILES,
        tile_tables.FUSED_TILES,
    )
    saved = tuple(dict(table) for table in live)
    if name != "table":
        if name not in VARIANTS:
            raise ValueError(f"unknown variant {name!r}")
        for table, row in VARIANTS[name]:
            if table == "gemm":
                tile_tables.GEMM_TILES[adapter] = row
            elif table == "reduce":
                tile_tables.REDUCE_TILES[adapter] = row
            elif table == "fused":
                tile_tables.FUSED_TILES.pop(adapter, None)
                if row is not None:
                    tile_tables.FUSED_TILES[adapter] = row
            else:
                for k in (3, 5):
                    for stride in (1, 2):
                        tile_tables.DEPTHWISE_TILES.pop((adapter, k, stride), None)
                        if row is not None:
                            tile_tables.DEPTHWISE_TILES[(adapter, k, stride)] = row
    try:
        yield
    finally:
        for table, old in zip(live, saved, strict=True):
            table.clear()
            table.update(old)


def sweep_model(path: str, names: list[str], storage: str, rounds: int) -> dict:
    """Per variant of one model: family GPU ms medians, total, pipelines, max error."""
    from engine.gpu.engine import Engine
    from engine.model.importer import load_tflite
    from engine.tools.bench.engine_runner import random_feeds

    graph = load_tflite(path)
    feeds = random_feeds(graph)
    engines, adapter = {}, _adapter_class()
    for name in names:
        with variant(adapter, name):
            engines[name] = Engine(graph, storage=storage)
    want = engines["table"].run(feeds)
    samples: dict[str, dict[str, list[float]]] = {n: defaultdict(list) for n in names}
    for e in engines.values():
        e.profile(feeds)  # warm-up: lazy driver compiles
    # a round is a profile (GPU ms per family, not wall time) and a timed run() per variant:
    # not interleave()'s timed calls alone, so its order is taken and the loop kept here
    for _, name in alternating(names, rounds):
        e = engines[name]
        fams = {i: family(e.graph, op) for i, op in enumerate(e.graph.ops)}
        sums: dict[str, float] = defaultdict(float)
        for d in e.profile(feeds):
            sums[fams.get(d.op_index, "other")] += d.gpu_ms
        for fam in FAMILIES:
            samples[name][fam].append(sums[fam])
        samples[name]["total"].append(sum(sums.values()))
        # run(): numpy in, outputs read back, what a caller waits for
        _, ms = timed(lambda e=e: e.run(feeds))
        samples[name]["run"].append(ms)
    rows = []
    for name in names:
        e = engines[name]
        got = e.run(feeds)
        err = max(float(np.max(np.abs(got[k] - want[k]))) for k in want)
        med = {k: float(np.median(v)) for k, v in samples[name].items()}
        rows.append({"variant": name, "conv1x1_ms": med["conv1x1"],
                     "depthwise_ms": med["depthwise"], "fused_ms": med["depthwise + 1x1"],
                     "other_ms": med["other"],
                     "total_gpu_ms": med["total"], "run_ms": med["run"],
                     "pipelines": len(e.pipeline_sources), "max_abs_diff": err})  # fmt: skip
    return {"model": Path(path).stem, "storage": storage, "rows": rows}


def _adapter_class() -> str:
    from engine.gpu.adapters import adapter_class
    from engine.gpu.device import shared_context

    return adapter_class(shared_context().info)


HEADER = ["variant", "conv1x1 GPU ms", "depthwise GPU ms", "dw + 1x1 GPU ms", "other GPU ms",
          "total GPU ms", "run() ms", "pipelines", "max abs diff"]  # fmt: skip


def markdown(report: dict) -> str:
    lines = [f"{report['rounds']} rounds", ""]
    for m in report["models"]:
        rows = [[r["variant"], f"{r['conv1x1_ms']:.4f}", f"{r['depthwise_ms']:.4f}",
                 f"{r['fused_ms']:.4f}", f"{r['other_ms']:.4f}", f"{r['total_gpu_ms']:.4f}",
                 f"{r['run_ms']:.3f}", r["pipelines"], f"{r['max_abs_diff']:.2e}"]
                for r in m["rows"]]  # fmt: skip
        lines += [f"### {m['model']} ({m['storage']})", "", *table(HEADER, rows, "lrrrrrrrr"), ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="tile_sweep", description=__doc__.splitlines()[0])
    p.add_argument("models", nargs="+")
    p.add_argument("--storage", default="buffer", choices=("buffer", "texture"))
    p.add_argument("--rounds", type=int, default=9, help="alternating rounds (9)")
    p.add_argument("--only", choices=TABLES, action="append", help="these tables' variants")
    p.add_argument("--variants", help="comma list of variant names (default: every one)")
    p.add_argument("--json", type=Path, help="write the report as JSON")
    args = p.parse_args(argv)
    if args.rounds < 1:
        p.error("--rounds must be >= 1")
    only = set(args.only or TABLES)
    names = ["table", *(n for n, rows in VARIANTS.items() if {t for t, _ in rows} <= only)]
    if args.variants:
        wanted = [n.strip() for n in args.variants.split(",") if n.strip()]
        unknown = [n for n in wanted if n not in VARIANTS]
        if unknown:
            p.error(f"--variants: unknown {unknown}; known: {', '.join(VARIANTS)}")
        names = ["table", *(n for n in names if n in wanted)]
    return run_sweeps(__spec__.name, argv, args.models,
                      lambda path: sweep_model(path, names, args.storage, args.rounds),
                      markdown, args.json, f"{len(names)} variants", rounds=args.rounds)  # fmt: skip


if __name__ == "__main__":
    sys.exit(main())
