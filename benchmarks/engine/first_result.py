"""Time to a model's first result in a fresh process, per kernel set, beside LiteRT's GPU
accelerator: what a program that loads one model and runs it once waits for.

    python -m benchmarks.engine.first_result models/face_detection_short_range.tflite \
        models/face_landmark.tflite [--rounds 5] [--kernels optimized compact] \
        [--cache cold warm] [--litert] [--json out.json]

Each measurement is a fresh process: `import engine`, device, `Engine.from_tflite(path,
kernels=...)`, one run on zero inputs, outputs read back; the clock starts before the
import. `--litert` adds LiteRT's GPU accelerator (ai-edge-litert, a dev dependency) doing
the same: `CompiledModel.from_file(..., hardware_accel=GPU)`, one run, outputs read.
Adapter: whatever the engine picks (`VK_ICD_FILENAMES` selects SwiftShader:
scripts/fetch_swiftshader.sh; LiteRT's Dawn refuses lavapipe).
- cache cold: a new, empty cache folder per process, as on a fresh machine: the driver's
  shader cache (MESA_SHADER_CACHE_DIR: lavapipe compiles each shader at its first
  dispatch and keeps it there; __GL_SHADER_DISK_CACHE_PATH: NVIDIA's) and the engine's
  own (ENGINE_CACHE_DIR: wgpu-py's compiled header, jinja's compiled templates, the
  rendered WGSL);
- cache warm: one folder that a first process filled, as every later start sees it.
`--runs N`: each process then times N more runs (median ms): the steady-state cost.
The checkout's engine package is byte-compiled first (compileall), as pip does when it
installs a wheel: a process that compiled it from source at every import (a source
checkout under PYTHONDONTWRITEBYTECODE, as on CI and the GPU machines) would add 0.05 s
(this project's 2-core machines) to 0.2-0.4 s (the H100 host) of import that no installed
engine pays.
Rounds interleave the contenders (per model and round: each contender once, the order
reversed every other round: engine/tools/bench/ab.py's alternating); rows are medians.
The report's stamp (benchmarks/common.py) records the load before and after
(engine/tools/bench/load.py; a busy machine is marked there) and the adapter the
engine's processes ran on.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks.common import ROOT, Bench, alternating, table
from engine.gpu.staged import KERNEL_MODES

# The children time themselves from before `import numpy`: nothing of this project is
# imported before their first result; the later runs go through time_runs
# (engine/tools/bench/timing.py), imported after it.
CHILD_ENGINE = """
import json, sys, time
t0 = time.perf_counter()
import numpy as np
from engine import Engine
t1 = time.perf_counter()
e = Engine.from_tflite(sys.argv[1], kernels=sys.argv[2])
t2 = time.perf_counter()
g = e.graph
feeds = {g.tensors[i].name: np.zeros(g.tensors[i].shape, np.float32) for i in g.inputs}
e.run(feeds)
t3 = time.perf_counter()
optimized_s = None
if sys.argv[2] == "staged":  # the swap to the optimized set: the steady state's runs
    e.wait_optimized()
    optimized_s = time.perf_counter() - t0
from engine.tools.bench.timing import time_runs
from benchmarks.common import adapter_record
ms, _ = time_runs(lambda: e.run(feeds), int(sys.argv[3]), warmup=0)
print(json.dumps({"seconds": t3 - t0, "import": t1 - t0, "engine": t2 - t1, "run": t3 - t2,
                  "optimized_s": optimized_s, "adapter": e.ctx.name, "run_ms": sorted(ms)[len(ms) // 2] if ms else None,
                  "phases_ms": e.init_ms, "adapter_record": adapter_record(e.ctx)}))
"""

CHILD_LITERT = """
import json, sys, time
t0 = time.perf_counter()
import numpy as np
from ai_edge_litert.compiled_model import CompiledModel
from ai_edge_litert.hardware_accelerator import HardwareAccelerator
t1 = time.perf_counter()
m = CompiledModel.from_file(sys.argv[1], hardware_accel=HardwareAccelerator.GPU)
ins, outs = m.create_input_buffers(0), m.create_output_buffers(0)
t2 = time.perf_counter()
def run():
    m.run_by_index(0, ins, outs)
    for b in outs:
        b.read(1, np.float32)
run()
t3 = time.perf_counter()
from engine.tools.bench.timing import time_runs
ms, _ = time_runs(run, int(sys.argv[2]), warmup=0)
print(json.dumps({"seconds": t3 - t0, "import": t1 - t0, "engine": t2 - t1, "run": t3 - t2,
                  "adapter": "LiteRT GPU (Dawn)", "run_ms": sorted(ms)[len(ms) // 2] if ms else None}))
"""


def measure(contender: str, model: str, cache_dir: str, runs: int = 0) -> dict:
    """One fresh process of `contender` ("litert-gpu" or a kernel set) on `model`."""
    folder = Path(cache_dir)
    # this checkout first, then the caller's path (a device machine's wheels are there)
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
    env = {**os.environ, "PYTHONPATH": path, "MESA_SHADER_CACHE_DIR": str(folder / "mesa"),
           "__GL_SHADER_DISK_CACHE_PATH": str(folder / "nvidia"),
           "ENGINE_CACHE_DIR": str(folder / "engine")}  # fmt: skip
    for name in ("mesa", "nvidia", "engine"):  # NVIDIA's driver does not make its folder
        (folder / name).mkdir(exist_ok=True)
    for knob in ("MESA_SHADER_CACHE_DISABLE", "__GL_SHADER_DISK_CACHE"):
        env.pop(knob, None)
    if contender == "litert-gpu":
        cmd = [sys.executable, "-c", CHILD_LITERT, model, str(runs)]
    else:
        cmd = [sys.executable, "-c", CHILD_ENGINE, model, contender, str(runs)]
    # cwd: the child's sys.path[0]; this checkout's engine, whatever folder we run from
    r = subprocess.run(cmd, env=env, cwd=ROOT, capture_output=True, text=True, check=False)
    lines = [line for line in r.stdout.splitlines() if line.startswith("{")]
    if r.returncode != 0 or not lines:
        tail = (r.stderr.strip().splitlines() or ["no output"])[-1]
        raise SystemExit(f"first_result: {contender} on {model} failed: {tail}")
    return json.loads(lines[-1])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("models", nargs="+", help=".tflite files")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--kernels", nargs="+", default=["optimized", "compact"], choices=KERNEL_MODES,
                    help="staged: the first result from the compact set, `optimized_s` when "
                    "the optimized set was swapped in, --runs timed after it")  # fmt: skip
    ap.add_argument("--cache", nargs="+", default=["cold", "warm"], choices=("cold", "warm"))
    ap.add_argument("--litert", action="store_true", help="add LiteRT's GPU accelerator")
    ap.add_argument("--runs", type=int, default=0,
                    help="then time N more runs in the same process (median ms)")  # fmt: skip
    ap.add_argument("--json", help="write every measurement here")
    args = ap.parse_args(argv)
    contenders = [*args.kernels, *(["litert-gpu"] if args.litert else [])]
    missing = [m for m in args.models if not Path(m).is_file()]
    if missing:
        ap.error(f"no such model file: {', '.join(missing)}")  # exit 2
    args.models = [str(Path(m).resolve()) for m in args.models]
    compileall.compile_dir(ROOT / "engine", quiet=1)  # as an installed wheel has it
    bench = Bench(__spec__.name, argv)
    rows, samples = [], []
    for model in args.models:
        warm_dirs = {c: tempfile.mkdtemp(prefix="first-result-warm-") for c in contenders}
        for cache in args.cache:
            got: dict[str, list[dict]] = {c: [] for c in contenders}
            # a round is a fresh process per contender, timed inside: alternating()'s order
            for r, c in alternating(contenders, args.rounds):
                cold = tempfile.mkdtemp(prefix="first-result-cold-")
                folder = cold if cache == "cold" else warm_dirs[c]
                if cache == "warm" and r == 0:  # fill it once first
                    measure(c, model, folder)
                got[c].append(measure(c, model, folder, args.runs))
                shutil.rmtree(cold, ignore_errors=True)
            for c in contenders:
                samples += [{"model": model, "contender": c, "cache": cache, **s} for s in got[c]]
                med = {k: statistics.median(s[k] for s in got[c])
                       for k in ("seconds", "import", "engine", "run")}  # fmt: skip
                runs_ms = [s["run_ms"] for s in got[c] if s.get("run_ms") is not None]
                swaps = [s["optimized_s"] for s in got[c] if s.get("optimized_s") is not None]
                med["optimized_s"] = statistics.median(swaps) if swaps else None
                med["run_ms"] = statistics.median(runs_ms) if runs_ms else None
                rows.append({"model": Path(model).stem, "contender": c, "cache": cache,
                             "adapter": got[c][0]["adapter"], **med})  # fmt: skip
        for d in warm_dirs.values():
            shutil.rmtree(d, ignore_errors=True)
    bench.adapter = next((s["adapter_record"] for s in samples if "adapter_record" in s), None)
    bench.report(markdown(rows, args.rounds), {"rows": rows, "samples": samples}, args.json)
    return 0


HEADER = ["model", "contender", "caches", "adapter", "import s", "set-up s", "first run s",
          "total s", "/ optimized", "optimized in s", "later runs ms", "/ optimized"]  # fmt: skip


def markdown(rows: list[dict], rounds: int) -> str:
    cells = []
    for row in rows:
        base = next((o for o in rows if o["model"] == row["model"]
                     and o["cache"] == row["cache"] and o["contender"] == "optimized"), None)  # fmt: skip
        ratio = f"{row['seconds'] / base['seconds']:.2f}" if base else "-"
        run_ms, run_ratio = "-", "-"
        if row["run_ms"] is not None:
            run_ms = f"{row['run_ms']:.1f}"
            if base and base["run_ms"]:
                run_ratio = f"{row['run_ms'] / base['run_ms']:.2f}"
        cells.append([row["model"], row["contender"], row["cache"], row["adapter"],
                      f"{row['import']:.2f}", f"{row['engine']:.2f}", f"{row['run']:.2f}",
                      f"{row['seconds']:.2f}", ratio, _seconds(row.get("optimized_s")),
                      run_ms, run_ratio])  # fmt: skip
    return "\n".join([f"fresh process to first result, median of {rounds} rounds", "",
                      *table(HEADER, cells, "llll" + "r" * 8)])  # fmt: skip


def _seconds(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


if __name__ == "__main__":
    raise SystemExit(main())
