"""ar-demo headless at an earlier commit vs this checkout, side by side.

The earlier commit's tree is exported (`git archive`) into a temporary folder and run from
there with its own code on this checkout's venv, models and clips (ENGINE_DATA_DIR);
"this checkout" runs the working tree. Each run is a fresh `ar-demo --solution EFFECT
--headless` process on the people clip (hands and bodies: every tracking solution has work)
with `--backend`; contenders alternate per round (A B, B A, ...), medians; the stamp
records the machine's load before and after. What changed between the two shows in the
frame's counts (`transfers.per_frame`: [submits, blocking reads, frames]; absent before
ar-demo counted them) beside frames/s and latency.

    python -m benchmarks.app.commit_ab --base 819dbdb [--effects hands pose holistic]
        [--backend webgpu] [--frames 60] [--rounds 2] [--json out/commit_ab.json]
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

from benchmarks.common import ROOT, Bench, probe_adapter, table
from engine.catalog.paths import assets_dir
from engine.tools.bench.ab import alternating


def export_tree(commit: str, folder: Path) -> Path:
    """`commit`'s files in `folder`/tree (git archive: tracked files, no history)."""
    tree = folder / "tree"
    tree.mkdir()
    archive = subprocess.run(["git", "archive", commit], cwd=ROOT, check=True,
                             capture_output=True).stdout  # fmt: skip
    subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
    return tree


def run(tree: Path, effect: str, backend: str, frames: int, folder: Path) -> dict:
    stats = folder / "stats.json"
    args = ["--solution", effect, "--input", str(assets_dir() / "people.mp4"), "--headless",
            "--output", str(folder / "out.mp4"), "--frames", str(frames), "--backend", backend,
            "--stats", str(stats), "--no-progress"]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(tree), "ENGINE_DATA_DIR": str(ROOT)}
    subprocess.run([sys.executable, "-m", "app.cli", *args], cwd=tree, env=env, check=True,
                   capture_output=True)  # fmt: skip
    return json.loads(stats.read_text())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--base", required=True, help="the earlier commit (any git revision)")
    ap.add_argument("--effects", nargs="+", default=["hands", "pose", "holistic"])
    ap.add_argument("--backend", default="webgpu", choices=("webgpu", "xnnpack", "auto"))
    ap.add_argument("--frames", type=int, default=60)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--json", default="out/commit_ab.json")
    args = ap.parse_args(argv)
    bench = Bench(__spec__.name, argv, adapter=probe_adapter())
    folder = Path(tempfile.mkdtemp())
    trees = {args.base: export_tree(args.base, folder), "this checkout": ROOT}
    rows = []
    for effect in args.effects:
        got: dict[str, list[dict]] = {name: [] for name in trees}
        for _, name in alternating(trees, args.rounds):
            got[name].append(run(trees[name], effect, args.backend, args.frames, folder))
        base = statistics.median(s["fps"] for s in got[args.base])
        for name, runs in got.items():
            fps = statistics.median(s["fps"] for s in runs)
            counts = (runs[0].get("transfers") or {}).get("per_frame")
            rows.append({"effect": effect, "tree": name, "fps": fps,
                         "fps_runs": [round(s["fps"], 2) for s in runs],
                         "latency_p50_ms": statistics.median(s["latency_ms"]["p50"] for s in runs),
                         "per_frame": counts, "ratio": fps / base})  # fmt: skip
    bench.report(markdown(rows, args), {"rows": rows}, args.json)
    return 0


def markdown(rows: list[dict], args) -> str:
    header = ["effect", "tree", "FPS (median)", "runs", "latency p50 ms",
              "[submits, reads, frames] a frame", "x base"]  # fmt: skip
    cells = [[r["effect"], r["tree"], f"{r['fps']:.2f}",
              " / ".join(f"{f:.2f}" for f in r["fps_runs"]), f"{r['latency_p50_ms']:.0f}",
              "-" if r["per_frame"] is None else str(r["per_frame"]), f"{r['ratio']:.2f}"]
             for r in rows]  # fmt: skip
    head = (f"ar-demo headless --backend {args.backend}, people clip, {args.frames} frames, "
            f"{args.rounds} rounds alternated")  # fmt: skip
    return "\n".join([head, "", *table(header, cells, "llrlrlr")])


if __name__ == "__main__":
    raise SystemExit(main())
