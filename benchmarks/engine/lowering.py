"""How long does the host take to lower a model: read the file, run the transforms, choose
the kernels and plan the memory (the engine's compile with no device and no shader
rendered: `engine-latency predict --installed` with its dispatch-list cache off)?

    python -m benchmarks.engine.lowering models/face_landmark_with_attention.tflite \
        models/pose_landmark_full.tflite [--runs 5] [--rounds 3] [--against OTHER_CHECKOUT] \
        [--json lowering.json]

Each round runs one process per checkout (this one, then `--against`, the order reversed
every other round) that lowers every model `--runs` times after one untimed lowering and
prints the wall times; a row: median and min over all rounds (ms). Both checkouts' code is
imported from their own folder, so `--against` times the engine before a change.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

from benchmarks.common import ROOT, Bench, table

# Runs in the checkout's folder, with the dispatch-list cache off: predict_file reads the
# file, lowers it and prices the dispatches (about 3 ms of it), an API both sides have.
LOWER = """
import json, sys, time
from engine.latency.predict import predict_file
runs, times = int(sys.argv[1]), {}
for path in sys.argv[2:]:
    predict_file(path, installed=True)
    times[path] = []
    for _ in range(runs):
        t0 = time.perf_counter()
        predict_file(path, installed=True)
        times[path].append(1e3 * (time.perf_counter() - t0))
print(json.dumps(times))
"""


def lower_ms(checkout: Path, models: list[str], runs: int) -> dict[str, list[float]]:
    cmd = [sys.executable, "-c", LOWER, str(runs), *models]
    env = {**os.environ, "ENGINE_LATENCY_CACHE": "0"}
    r = subprocess.run(cmd, cwd=checkout, env=env, capture_output=True, text=True, check=False)
    if r.returncode != 0:
        last = (r.stderr.strip().splitlines() or ["no message"])[-1]
        raise SystemExit(f"lowering: in {checkout}: {last}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def measure(models: list[str], checkouts: dict[str, Path], runs: int, rounds: int) -> list:
    samples = {(c, m): [] for c in checkouts for m in models}
    for r in range(rounds):
        order = list(checkouts) if r % 2 == 0 else list(checkouts)[::-1]
        for name in order:
            for m, ms in lower_ms(checkouts[name], models, runs).items():
                samples[(name, m)] += ms
    return [{"checkout": c, "model": Path(m).stem, "runs": len(s),
             "median_ms": statistics.median(s), "min_ms": min(s), "samples_ms": s}
            for (c, m), s in samples.items()]  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("models", nargs="+")
    p.add_argument("--runs", type=int, default=5, help="timed lowerings per model and process")
    p.add_argument("--rounds", type=int, default=3, help="processes per checkout, alternated")
    p.add_argument("--against", type=Path, help="another checkout, timed in the same rounds")
    p.add_argument("--json", type=Path, help="write the figures as JSON")
    args = p.parse_args(argv)
    models = [str(Path(m).resolve()) for m in args.models]
    for m in models:
        if not Path(m).is_file():
            p.error(f"{m}: no such file")
    if args.runs < 1 or args.rounds < 1:
        p.error("--runs and --rounds must be at least 1")
    checkouts = {"this": ROOT}
    if args.against:
        checkouts["against"] = args.against.resolve()
    bench = Bench(__spec__.name, argv)
    rows = measure(models, checkouts, args.runs, args.rounds)
    body = [[r["checkout"], r["model"], str(r["runs"]), f"{r['median_ms']:.1f}",
             f"{r['min_ms']:.1f}"] for r in rows]  # fmt: skip
    text = "\n".join(table(["checkout", "model", "runs", "median ms", "min ms"], body, "llrrr"))
    bench.report(text, {"rows": rows}, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
