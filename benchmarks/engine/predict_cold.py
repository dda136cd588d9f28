"""`engine-latency predict` cold: a fresh process, an empty cache, Python start included.

    python -m benchmarks.engine.predict_cold models/face_detection_short_range.tflite \
        models/face_landmark.tflite models/selfie_segmentation.tflite \
        [--runs 10] [--against OTHER_CHECKOUT] [--json cold.json]

Each timed run is `python -m engine.latency.cli predict MODEL` in a new process with a new,
empty ENGINE_CACHE_DIR (no cached dispatch list, no disk work-group memo), wall clock from
start to exit. The models alternate in rounds (A, B, C, A, B, C ...) so a change of load
hits all of them alike; `--against` runs the same command from another checkout in the
same rounds (A/B). One untimed process per model and checkout first writes the bytecode
(.pyc) an installed package has, whatever PYTHONDONTWRITEBYTECODE says. A row: median and
min over the runs (ms); in the same rounds, two floors: `python -c pass` and `import
tflite` (the .tflite reader's package, which imports numpy: what any first prediction
loads before the engine's own code).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.common import ROOT, Bench, table

FLOORS = {
    "python -c pass": "pass",  # the interpreter alone
    "import tflite": "import tflite",
}  # the importer's flatbuffer classes and numpy


def cold_ms(cmd: list[str], cwd: Path) -> float:
    """Wall time (ms) of one fresh process of `cmd` in `cwd`, over an empty cache folder."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    with tempfile.TemporaryDirectory() as cache:
        env["ENGINE_CACHE_DIR"] = cache
        t0 = time.perf_counter()
        r = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, check=False)
        ms = 1e3 * (time.perf_counter() - t0)
    if r.returncode != 0:
        last = (r.stderr.strip().splitlines() or ["no message"])[-1]
        raise SystemExit(f"predict_cold: {' '.join(cmd)} in {cwd}: {last}")
    return ms


def measure(models: list[str], checkouts: dict[str, Path], runs: int) -> list[dict]:
    """Rows (checkout, model, runs, median_ms, min_ms, samples_ms), models in rounds."""
    cases = [(name, root, Path(m).stem, [sys.executable, "-m", "engine.latency.cli", "predict",
              str(Path(m).resolve())]) for name, root in checkouts.items() for m in models]  # fmt: skip
    cases += [("-", ROOT, name, [sys.executable, "-c", code]) for name, code in FLOORS.items()]
    for _, root, _, cmd in cases:  # untimed: bytecode written, files in the page cache
        cold_ms(cmd, root)
    samples: dict[int, list[float]] = {i: [] for i in range(len(cases))}
    for _ in range(runs):
        for i, (_, root, _, cmd) in enumerate(cases):
            samples[i].append(cold_ms(cmd, root))
    return [{"checkout": name, "model": model, "runs": runs,
             "median_ms": statistics.median(samples[i]), "min_ms": min(samples[i]),
             "samples_ms": samples[i]} for i, (name, _, model, _) in enumerate(cases)]  # fmt: skip


def markdown(rows: list[dict]) -> str:
    body = [[r["checkout"], r["model"], str(r["runs"]), f"{r['median_ms']:.0f}",
             f"{r['min_ms']:.0f}"] for r in rows]  # fmt: skip
    return "\n".join(table(["checkout", "model", "runs", "median ms", "min ms"], body, "llrrr"))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("models", nargs="+")
    p.add_argument("--runs", type=int, default=10, help="timed processes per model")
    p.add_argument("--against", type=Path, help="another checkout, timed in the same rounds")
    p.add_argument("--json", type=Path, help="write the figures as JSON")
    args = p.parse_args(argv)
    for m in args.models:
        if not Path(m).is_file():
            p.error(f"{m}: no such file")
    checkouts = {"this": ROOT}
    if args.against:
        checkouts["against"] = args.against.resolve()
    bench = Bench(__spec__.name, argv)
    rows = measure(args.models, checkouts, args.runs)
    bench.report(markdown(rows), {"rows": rows}, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
