"""ar-demo headless with its frames overlapped vs one frame at a time, side by side.

"overlapped" is ar-demo as shipped: frames decoded ahead and encoded behind on worker threads
(engine/vision/read_ahead.py, app/frame_workers.py) and two frames on the GPU at once
(app/pipeline.py submit/finish). "one at a time" is the same program with those three
turned off in the process (benchmarks/app/one_at_a_time.py: the loop reads, renders, waits,
reads back and encodes each frame itself, what headless mode did before), the oracle
tests/app/test_headless.py checks the shipped file against. Fresh processes, contenders alternated per round (A B, B A,
...), medians; the stamp records the machine's load before and after.

    python -m benchmarks.app.overlap_bench [--effects face-mesh segmentation face-detection]
        [--backends xnnpack webgpu] [--frames 150] [--rounds 3] [--json out/overlap.json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks.common import ROOT, Bench, probe_adapter, table
from engine.catalog.paths import assets_dir
from engine.tools.bench.ab import alternating

# contender -> the module its fresh process runs (ar-demo's arguments follow)
CONTENDERS = {"overlapped": "app.cli", "one at a time": "benchmarks.app.one_at_a_time"}


def run(module: str, effect: str, backend: str, frames: int, folder: Path) -> dict:
    stats = folder / "stats.json"
    args = ["--solution", effect if effect != "segmentation" else "selfie-segmentation",
            "--input", str(assets_dir() / "sample.mp4"), "--headless",
            "--output", str(folder / "out.mp4"), "--frames", str(frames), "--backend", backend,
            "--stats", str(stats), "--no-progress"]  # fmt: skip
    subprocess.run([sys.executable, "-m", module, *args], cwd=ROOT, check=True,
                   capture_output=True)  # fmt: skip
    return json.loads(stats.read_text())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--effects", nargs="+", default=["face-mesh", "segmentation", "face-detection"])
    ap.add_argument("--backends", nargs="+", default=["xnnpack", "webgpu"])
    ap.add_argument("--frames", type=int, default=150)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--json", default="out/overlap_bench.json")
    args = ap.parse_args(argv)
    bench = Bench(__spec__.name, argv, adapter=probe_adapter())
    rows, folder = [], Path(tempfile.mkdtemp())
    for effect in args.effects:
        for backend in args.backends:
            got: dict[str, list[dict]] = {c: [] for c in CONTENDERS}
            for _, name in alternating(CONTENDERS, args.rounds):
                got[name].append(run(CONTENDERS[name], effect, backend, args.frames, folder))
            base = statistics.median(s["fps"] for s in got["one at a time"])
            for name, runs in got.items():
                fps = statistics.median(s["fps"] for s in runs)
                rows.append({"effect": effect, "backend": backend, "loop": name, "fps": fps,
                             "fps_runs": [round(s["fps"], 2) for s in runs],
                             "latency_p50_ms": statistics.median(s["latency_ms"]["p50"]
                                                                 for s in runs),
                             "speedup": fps / base})  # fmt: skip
    bench.report(markdown(rows, args), {"rows": rows}, args.json)
    return 0


def markdown(rows: list[dict], args) -> str:
    header = ["effect", "backend", "loop", "FPS (median)", "runs", "latency p50 ms", "x"]
    cells = [[r["effect"], r["backend"], r["loop"], f"{r['fps']:.1f}",
              " / ".join(f"{f:.1f}" for f in r["fps_runs"]), f"{r['latency_p50_ms']:.1f}",
              f"{r['speedup']:.2f}"] for r in rows]  # fmt: skip
    head = f"ar-demo headless, sample clip, {args.frames} frames, {args.rounds} rounds alternated"
    return "\n".join([head, "", *table(header, cells, "lllrlrr")])


if __name__ == "__main__":
    raise SystemExit(main())
