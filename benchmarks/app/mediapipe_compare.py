"""ar-demo headless vs MediaPipe's Python solution, side by side in one run.

For each effect, the same clip (EFFECTS) and frame count: ar-demo (this project, on the
WebGPU adapter, sleep and spin) and MediaPipe 0.10.14's Python solution (its CPU
path, in a side venv: not a dependency of this project). Prints a markdown table under
the stamp line (benchmarks/common.py; the adapter: the one a fresh process picks, as
ar-demo's do) and writes JSON ({"stamp", "rows"}). mediapipe_peer.py runs in that venv,
without this project: it keeps its own timing loop.

usage: python -m benchmarks.app.mediapipe_compare [--frames 150] [--json out/mp_compare.json]
       [--effects segmentation face-detection face-mesh hands pose] [--mp-python PATH]   (default: make /tmp/mediapipe-venv with pip if missing)
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks.common import Bench, probe_adapter, table
from engine.catalog.paths import assets_dir, models_dir

PEER = Path(__file__).resolve().parent / "mediapipe_peer.py"  # runs in the side venv
# effect -> (clip, its models: .tflite names, or the name of an ar-demo --solution): the
# face effects on the sample clip (one face), hands and pose on the people clip (hands and
# bodies, cuts), as the solutions table of docs/benchmarks.md
EFFECTS = {
    "segmentation": ("sample.mp4", ["selfie_segmentation"]),
    "face-detection": ("sample.mp4", ["face_detection_short_range"]),
    "face-mesh": ("sample.mp4", ["face_detection_short_range", "face_landmark"]),
    "hands": ("people.mp4", "hands"),
    "pose": ("people.mp4", "pose"),
}


def clip(effect: str) -> Path:
    return assets_dir() / EFFECTS[effect][0]


def model_options(effect: str) -> list[str]:
    """ar-demo's options for the effect's models."""
    models = EFFECTS[effect][1]
    if isinstance(models, str):
        return ["--solution", models]
    return [a for m in models for a in ("--model", str(models_dir() / f"{m}.tflite"))]


def mediapipe_python(path: str | None) -> str:
    if path:
        return path
    venv = Path(tempfile.gettempdir()) / "mediapipe-venv"
    py = venv / "bin" / "python"
    if not py.exists():
        print(f"making {venv} with mediapipe==0.10.14 ...", file=sys.stderr)
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(py), "-m", "pip", "install", "-q", "mediapipe==0.10.14",
                        "opencv-python-headless"], check=True)  # fmt: skip
    return str(py)


def run_ar_demo(effect: str, frames: int, sync: str, out: Path) -> dict:
    stats = out.with_suffix(".json")
    cmd = [sys.executable, "-m", "app.cli", "--input", str(clip(effect)), "--headless",
           "--output", str(out), "--frames", str(frames), "--sync", sync, "--stats", str(stats),
           "--no-progress", "--effect", effect, *model_options(effect)]  # fmt: skip
    subprocess.run(cmd, check=True, capture_output=True)
    return json.loads(stats.read_text())


def run_mediapipe(py: str, effect: str, frames: int, out: Path) -> dict:
    proc = subprocess.run([py, str(PEER), effect, str(clip(effect)), str(out), str(frames)],
                          capture_output=True, text=True, check=True)  # fmt: skip
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--frames", type=int, default=150)
    ap.add_argument("--json", default="out/mediapipe_compare.json")
    ap.add_argument("--mp-python", default=None)
    ap.add_argument("--effects", nargs="+", choices=list(EFFECTS), default=list(EFFECTS))
    args = ap.parse_args(argv)
    py = mediapipe_python(args.mp_python)
    bench = Bench(__spec__.name, argv, adapter=probe_adapter())  # probed before the gate
    rows, tmp = [], Path(tempfile.mkdtemp())
    for effect in args.effects:
        for sync in ("sleep", "spin"):
            s = run_ar_demo(effect, args.frames, sync, tmp / f"ar-{effect}-{sync}.mp4")
            rows.append({"effect": effect, "backend": f"ar-demo ({sync})", "fps": s["fps"],
                         "p50": s["latency_ms"]["p50"], "p90": s["latency_ms"]["p90"],
                         "cpu_per_frame_ms": s["frame_cpu_ms"]["p50"]})  # fmt: skip
        m = run_mediapipe(py, effect, args.frames, tmp / f"mp-{effect}.mp4")
        rows.append({"effect": effect, "backend": f"mediapipe {m['mediapipe']} (CPU)",
                     "fps": m["fps"], "p50": m["latency_ms"]["p50"],
                     "p90": m["latency_ms"]["p90"], "cpu_per_frame_ms": None})  # fmt: skip
    bench.report(markdown(rows), {"rows": rows}, args.json)
    return 0


def markdown(rows: list[dict]) -> str:
    header = ["effect", "backend", "FPS", "latency p50 ms", "p90 ms", "CPU ms/frame"]
    cells = [[r["effect"], r["backend"], f"{r['fps']:.1f}", f"{r['p50']:.1f}", f"{r['p90']:.1f}",
              f"{r['cpu_per_frame_ms']:.2f}" if r["cpu_per_frame_ms"] is not None else "-"]
             for r in rows]  # fmt: skip
    return "\n".join(table(header, cells, "llrrrr"))


if __name__ == "__main__":
    sys.exit(main())
