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
Prints a markdown table (ms, median of --repeat processes) and optionally JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]  # the repo root (a source checkout)
PHASES = ("transforms", "kernel_codegen", "planning", "shaders_and_pipelines",
          "weight_upload", "bind_groups_and_buffers")  # fmt: skip


def child(path: str) -> None:
    """Run in the fresh process: two engines of one model, their init split as JSON."""
    sys.path.insert(0, str(ROOT))
    from engine.gpu.device import shared_context
    from engine.gpu.engine import Engine
    from engine.model.importer import load_tflite

    shared_context()  # the device: not part of an engine's init
    out = []
    for _ in range(2):
        t0 = time.perf_counter()
        graph = load_tflite(Path(path))
        parse = time.perf_counter() - t0
        e = Engine(graph)
        total = time.perf_counter() - t0
        split = {"parse": parse * 1e3, **{k: e.init_ms.get(k, 0.0) for k in PHASES}}
        out.append({"total_ms": total * 1e3, "split_ms": split, **e.pipeline_stats})
    print(json.dumps(out))


def run(path: str, env: dict) -> list[dict]:
    r = subprocess.run(
        [sys.executable, __file__, "--child", path],
        env={**os.environ, **env},
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


def measure(path: str, repeat: int) -> dict:
    cache = tempfile.mkdtemp(prefix="mesa-cache-")
    cold_env = {"MESA_SHADER_CACHE_DISABLE": "true"}
    disk_env = {"MESA_SHADER_CACHE_DIR": cache, "MESA_SHADER_CACHE_DISABLE": "false"}
    run(path, disk_env)  # fill the driver's cache once
    cold, same, disk = [], [], []
    for _ in range(repeat):
        first, second = run(path, cold_env)
        cold.append(first)
        same.append(second)
        disk.append(run(path, disk_env)[0])
    return {
        "cold": _median(cold),
        "warm_same_device": _median(same),
        "warm_new_process": _median(disk),
    }


def markdown(report: dict) -> str:
    lines = [
        "| model | cold ms | warm, same device ms | warm / cold | warm, new process ms "
        "| warm / cold | pipelines compiled cold / warm |",
        "| --- | ---: | ---: | ---: | ---: | ---: | --- |",
    ]
    for model, r in report.items():
        c, s, d = r["cold"], r["warm_same_device"], r["warm_new_process"]
        lines.append(
            f"| {model} | {c['total_ms']:.0f} | {s['total_ms']:.0f} "
            f"| {s['total_ms'] / c['total_ms']:.2f} | {d['total_ms']:.0f} "
            f"| {d['total_ms'] / c['total_ms']:.2f} | {c['compiled']} / {s['compiled']} |"
        )
    lines += ["", "| model | run | " + " | ".join(("parse", *PHASES)) + " |",
              "| --- | --- |" + " ---: |" * (len(PHASES) + 1)]  # fmt: skip
    for model, r in report.items():
        for label, key in (("cold", "cold"), ("warm, same device", "warm_same_device"),
                           ("warm, new process", "warm_new_process")):  # fmt: skip
            split = r[key]["split_ms"]
            lines.append(
                f"| {model} | {label} | " + " | ".join(f"{split[k]:.0f}" for k in split) + " |"
            )
    return "\n".join(lines)


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
    report = {Path(m).stem: measure(m, args.repeat) for m in args.models}
    print(markdown(report))
    if args.json:
        args.json.write_text(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
