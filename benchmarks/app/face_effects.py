"""The face effects anchored in 3D: the face geometry's cost per face (numpy and GPU), and
ar-demo's frames/s with --style glasses and paint beside the plain face mesh (points).

- geometry: engine/vision/face_geometry.py (float64 numpy, what the CPU-decided path runs
  per face) on the sample clip's 300 MediaPipe faces, ms a face; the GPU pass
  (engine/vision/gpu_face_geometry.py) as the app records it, one face a dispatch (what a
  frame pays), and all 300 faces in one dispatch (ms a face)
- effects: ar-demo headless on the sample clip (fresh processes, styles alternated per
  round: A B C, C B A, ...; medians), per backend: FPS, latency p50 and the render
  stage's GPU ms p50 from --stats; every style runs the face geometry (the effect asks
  FaceMesh for it whatever the style), so the difference is the drawing
- usage: python -m benchmarks.app.face_effects [--backends xnnpack webgpu] [--frames 90]
  [--rounds 3] [--json out/face_effects.json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from benchmarks.common import ROOT, Bench, table, time_runs
from engine.catalog.paths import assets_dir
from engine.tools.bench.ab import alternating

STYLES = ("points", "glasses", "paint")
SIZE = (640, 480)


def geometry_costs(ctx, dispatches: int = 100) -> dict:
    """ms a face: numpy; the GPU pass one face a dispatch (`dispatches` of them in one
    encoder); all the clip's faces in one dispatch. GPU: wall time of one submit and its
    wait (lavapipe's timestamps miss most of a one-work-group pass: docs/app.md), median of
    7 after one that compiles the shader."""
    import time

    import wgpu

    from engine.vision.face_geometry import face_geometry
    from engine.vision.gpu_face_geometry import GpuFaceGeometry

    faces = np.load(ROOT / "tests" / "data" / "mediapipe" / "sample_clip.npz")["fm_landmarks"]
    wall, _ = time_runs(lambda: [face_geometry(lm, SIZE) for lm in faces], runs=5, warmup=1)
    out = {"numpy_ms_per_face": statistics.median(wall) / len(faces), "faces": len(faces)}
    dev, usage = ctx.device, wgpu.BufferUsage
    points = np.ones((len(faces), faces.shape[1], 4), np.float32)
    points[..., :3] = faces
    buf = dev.create_buffer_with_data(data=points, usage=usage.STORAGE)
    flags = dev.create_buffer_with_data(data=np.ones(len(faces), np.float32), usage=usage.STORAGE)
    for key, n, repeat in (("gpu_ms_one_face_dispatch", 1, dispatches),
                           ("gpu_ms_per_face_batched", len(faces), 1)):  # fmt: skip
        stage = GpuFaceGeometry(ctx, buf, flags, faces=n, points_stride=faces.shape[1],
                                status_start=0, status_stride=1)  # fmt: skip
        stage.configure(SIZE)
        times = []
        for _ in range(8):
            encoder = dev.create_command_encoder()
            for _ in range(repeat):
                stage.encode(encoder)
            t0 = time.perf_counter()
            dev.queue.submit([encoder.finish()])
            dev.queue.read_buffer(stage.poses, 0, 16)  # waits for the queue
            times.append((time.perf_counter() - t0) * 1e3 / (n * repeat))
        out[key] = statistics.median(times[1:])
        stage.destroy()
    return out


def run_style(style: str, backend: str, frames: int, folder: Path) -> dict:
    stats = folder / "stats.json"
    args = ["--solution", "face-mesh", "--style", style, "--input",
            str(assets_dir() / "sample.mp4"), "--headless", "--output", str(folder / "out.mp4"),
            "--frames", str(frames), "--backend", backend, "--stats", str(stats),
            "--no-progress"]  # fmt: skip
    subprocess.run([sys.executable, "-m", "app.cli", *args], cwd=ROOT, check=True,
                   capture_output=True)  # fmt: skip
    return json.loads(stats.read_text())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--backends", nargs="+", default=["xnnpack", "webgpu"])
    ap.add_argument("--frames", type=int, default=90)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--json", default="out/face_effects.json")
    args = ap.parse_args(argv)
    from engine.gpu import shared_context

    bench = Bench(__spec__.name, argv)
    ctx = bench.use(shared_context())
    geometry = geometry_costs(ctx)
    rows, folder = [], Path(tempfile.mkdtemp())
    for backend in args.backends:
        got: dict[str, list[dict]] = {s: [] for s in STYLES}
        for _, style in alternating(STYLES, args.rounds):
            got[style].append(run_style(style, backend, args.frames, folder))
        base = statistics.median(s["fps"] for s in got["points"])
        for style, runs in got.items():
            fps = statistics.median(s["fps"] for s in runs)
            rows.append({
                "backend": backend, "style": style, "fps": fps,
                "fps_runs": [round(s["fps"], 1) for s in runs],
                "latency_p50_ms": statistics.median(s["latency_ms"]["p50"] for s in runs),
                "render_gpu_ms_p50": statistics.median(
                    s["gpu_ms"].get("render", {}).get("p50", float("nan")) for s in runs),
                "vs_points": fps / base,
            })  # fmt: skip
    bench.report(markdown(geometry, rows, args), {"geometry": geometry, "rows": rows}, args.json)
    return 0


def markdown(geometry: dict, rows: list[dict], args) -> str:
    g = geometry
    geo = table(["face geometry", "ms a face"], [
        [f"numpy (float64), {g['faces']} faces one by one", f"{g['numpy_ms_per_face']:.3f}"],
        ["GPU pass, one face a dispatch (as a frame runs it; 100 in one submit)",
         f"{g['gpu_ms_one_face_dispatch']:.3f}"],
        [f"GPU pass, {g['faces']} faces in one dispatch", f"{g['gpu_ms_per_face_batched']:.4f}"],
    ], "lr")  # fmt: skip
    header = ["backend", "style", "FPS (median)", "runs", "latency p50 ms", "render GPU ms p50",
              "x points"]  # fmt: skip
    cells = [[r["backend"], r["style"], f"{r['fps']:.1f}", " / ".join(map(str, r["fps_runs"])),
              f"{r['latency_p50_ms']:.1f}", f"{r['render_gpu_ms_p50']:.2f}",
              f"{r['vs_points']:.2f}"] for r in rows]  # fmt: skip
    head = (f"ar-demo --solution face-mesh headless, sample clip 640x480, {args.frames} frames, "
            f"{args.rounds} rounds alternated")  # fmt: skip
    return "\n".join([*geo, "", head, "", *table(header, cells, "llrlrrr")])


if __name__ == "__main__":
    raise SystemExit(main())
