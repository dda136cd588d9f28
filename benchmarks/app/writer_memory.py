"""The output file's own memory: anonymous memory while ar-demo's writer encodes N frames.

    python -m benchmarks.app.writer_memory [--frames 6000] [--containers mp4,mkv,avi]
                                           [--json out/writer_memory.json]

Per container, a child process opens ar-demo's writer (app/output.py open_writer: OpenCV's
FFmpeg backend, mp4v) and writes the people clip's first 30 frames over and over, with
nothing else running; every 1,000 frames it trims the heap (malloc_trim, so freed blocks
do not count) and reads anonymous memory. What grows is what the muxer keeps until the
file is closed: an mp4's index (its moov box is written at the end, so each frame's
entry stays in memory), an avi's idx1 entries, an mkv's cues (one per cluster). The
soak (benchmarks/app/soak.py) counts it in ar-demo's heap; this says how much it is.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks.common import Bench, table

EVERY = 1000


def child(container: str, frames: int) -> dict:
    """Write `frames` frames into a temporary file of `container`; the samples."""
    import gc

    from app.heap import anon_mb, trim_heap
    from app.output import open_writer
    from app.sources import open_source
    from engine.catalog.paths import assets_dir

    src = open_source(str(assets_dir() / "people.mp4"))
    clip = [src.read().bgr for _ in range(30)]
    src.close()
    samples = []
    with tempfile.TemporaryDirectory() as tmp:
        writer = open_writer(Path(tmp) / f"w.{container}", 30.0, (640, 480))
        for i in range(frames + 1):
            if i % EVERY == 0:
                gc.collect()
                trim_heap()
                samples.append({"frame": i, "anon_mb": anon_mb()})
            if i < frames:
                writer.write(clip[i % len(clip)])
        writer.release()
    gc.collect()
    trim_heap()
    return {"container": container, "frames": frames, "samples": samples,
            "released_mb": anon_mb()}  # fmt: skip


def row(run: dict) -> dict:
    """Growth per frame by least squares over the samples after the first 1,000 frames."""
    import numpy as np

    s = [x for x in run["samples"] if x["frame"] >= EVERY]
    f = np.array([x["frame"] for x in s], np.float64)
    y = np.array([x["anon_mb"] for x in s], np.float64)
    per_frame = float(np.polyfit(f, y, 1)[0]) * 2**20
    return {"container": run["container"], "frames": run["frames"],
            "anon_mb": (run["samples"][0]["anon_mb"], run["samples"][-1]["anon_mb"]),
            "released_mb": run["released_mb"], "bytes_per_frame": per_frame,
            "mb_per_15000": per_frame * 15000 / 2**20}  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.app.writer_memory",
                                description=__doc__.split("\n")[0])  # fmt: skip
    p.add_argument("--frames", type=int, default=6000)
    p.add_argument("--containers", default="mp4,mkv,avi")
    p.add_argument("--json", metavar="OUT.json")
    p.add_argument("--child", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child:
        print(json.dumps(child(args.child, args.frames)))
        return 0
    bench = Bench(__spec__.name, argv)
    rows = []
    for container in [c.strip() for c in args.containers.split(",") if c.strip()]:
        cmd = [sys.executable, "-m", "benchmarks.app.writer_memory", "--child", container,
               "--frames", str(args.frames)]  # fmt: skip
        out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
        rows.append(row(json.loads(out.strip().splitlines()[-1])))
    cells = [[r["container"], r["frames"], f"{r['anon_mb'][0]:.1f} -> {r['anon_mb'][1]:.1f}",
              f"{r['bytes_per_frame']:.0f}", f"{r['mb_per_15000']:.2f}",
              f"{r['released_mb']:.1f}"] for r in rows]  # fmt: skip
    header = ["container", "frames", "anon MB start -> end", "B/frame", "MB per 15,000 frames",
              "anon MB after release"]  # fmt: skip
    text = "\n".join([*table(header, cells, "lrlrrr"), "",
                      "B/frame: least squares over the samples from frame 1,000"])  # fmt: skip
    bench.report(text, {"rows": rows}, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
