"""Engine initialisation, cold vs warm, split into its phases.

    python -m benchmarks.engine.init_cold_warm models/face_detection_short_range.tflite \
        models/selfie_segmentation.tflite models/face_landmark.tflite [--json init.json]

Each model runs in a fresh process (the device is created before the clock starts):
- cold: the first Engine of the model in the process, Mesa's shader cache disabled;
- warm (same device): a second Engine of the model in that process, which finds
  every pipeline compiled already (GpuContext.pipelines);
- warm (new process): a fresh process over a Mesa shader cache the cold runs filled,
  as a program started a second time would see it (wgpu-py 0.32 has no pipeline cache
  of its own to persist).
Prints a markdown table (ms, median of --repeat processes) under the stamp line
(benchmarks/common.py; the adapter is the one the processes report) and optionally JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks.common import ROOT, Bench, adapter_record, table, timed

PHASES = ("transforms", "kernel_codegen", "planning", "shaders_and_pipelines",
          "weight_upload", "bind_groups_and_buffers")  # fmt: skip


def child(path: str) -> None:
    """Run in the fresh process: two engines of one model, their init split as JSON, and
    the adapter they ran on."""
    from engine.gpu.device import shared_context
    from engine.gpu.engine import Engine
    from engine.model.importer import load_tflite

    ctx = shared_context()  # the device: not part of an engine's init
    out = []
    for _ in range(2):
        graph, parse_ms = timed(lambda: load_tflite(Path(path)))
        e, engine_ms = timed(lambda graph=graph: Engine(graph))
        split = {"parse": parse_ms, **{k: e.init_ms.get(k, 0.0) for k in PHASES}}
        out.append({"total_ms": parse_ms + engine_ms, "split_ms": split, **e.pipeline_stats})
    print(json.dumps({"adapter": adapter_record(ctx), "engines": out}))


def run(path: str, env: dict) -> dict:
    """One fresh process (this checkout's engine: cwd ROOT) on the model at `path`."""
    r = subprocess.run(
        [sys.executable, "-m", "benchmarks.engine.init_cold_warm", "--child", path],
        env={**os.environ, **env},
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    if r.returncode != 0:
        last = (r.stderr.strip().splitlines() or ["no message"])[-1]
        print(f"init_cold_warm: {path}: {last}", file=sys.stderr)
        raise SystemExit(2)
    return json.loads(r.stdout.strip().splitlines()[-1])


def _median(rows: list[dict]) -> dict:
    """Per figure, the median over processes."""
    return {
        "total_ms": statistics.median(r["total_ms"] for r in rows),
        "split_ms": {
            k: statistics.median(r["split_ms"][k] for r in rows) for k in rows[0]["split_ms"]
        },
        "compiled": rows[0]["compiled"],
        "reused": rows[0]["reused"],
    }


def measure(path: str, repeat: int) -> tuple[dict, dict]:
    """The model's medians, and the adapter record its processes reported."""
    cache = tempfile.mkdtemp(prefix="mesa-cache-")
    cold_env = {"MESA_SHADER_CACHE_DISABLE": "true"}
    disk_env = {"MESA_SHADER_CACHE_DIR": cache, "MESA_SHADER_CACHE_DISABLE": "false"}
    adapter = run(path, disk_env)["adapter"]  # fill the driver's cache once
    cold, same, disk = [], [], []
    # a round is two processes, each reporting its own split (not a timed call): a cold one
    # (its second engine: warm, same device), then one over the cache filled above
    for _ in range(repeat):
        first, second = run(path, cold_env)["engines"]
        cold.append(first)
        same.append(second)
        disk.append(run(path, disk_env)["engines"][0])
    medians = {
        "cold": _median(cold),
        "warm_same_device": _median(same),
        "warm_new_process": _median(disk),
    }
    return medians, adapter


HEADER = ["model", "cold ms", "warm, same device ms", "warm / cold", "warm, new process ms",
          "warm / cold", "pipelines compiled cold / warm"]  # fmt: skip
RUNS = (("cold", "cold"), ("warm, same device", "warm_same_device"),
        ("warm, new process", "warm_new_process"))  # fmt: skip


def markdown(report: dict) -> str:
    rows = []
    for model, r in report.items():
        c, s, d = r["cold"], r["warm_same_device"], r["warm_new_process"]
        rows.append([model, f"{c['total_ms']:.0f}", f"{s['total_ms']:.0f}",
                     f"{s['total_ms'] / c['total_ms']:.2f}", f"{d['total_ms']:.0f}",
                     f"{d['total_ms'] / c['total_ms']:.2f}", f"{c['compiled']} / {s['compiled']}"])  # fmt: skip
    splits = [[model, label, *(f"{v:.0f}" for v in r[key]["split_ms"].values())]
              for model, r in report.items() for label, key in RUNS]  # fmt: skip
    return "\n".join([*table(HEADER, rows, "lrrrrrl"), "",
                      *table(["model", "run", "parse", *PHASES], splits, "ll" + "r" * 7)])  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("models", nargs="*")
    p.add_argument("--repeat", type=int, default=3, help="fresh processes per row (median)")
    p.add_argument("--json", type=Path, help="write the figures as JSON")
    p.add_argument("--child", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child:
        child(args.child)
        return 0
    if not args.models:
        p.error("give MODEL files")
    for m in args.models:
        if not Path(m).is_file():
            p.error(f"{m}: no such file")
    bench = Bench(__spec__.name, argv)
    report = {}
    for m in args.models:  # resolved: the processes run in ROOT
        report[Path(m).stem], bench.adapter = measure(str(Path(m).resolve()), args.repeat)
    bench.report(markdown(report), {"models": report}, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
