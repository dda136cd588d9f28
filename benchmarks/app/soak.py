"""Soak: each ar-demo effect for thousands of frames headless; memory and GPU objects over time.

    python -m benchmarks.app.soak [--frames 3000] [--effects face-mesh,segmentation,...]
                                [--every 100] [--input assets/sample.mp4] [--json out/soak.json]

Per effect (and style), a child process runs the real headless path (app.headless
.run_headless: upload, solution, overlay, readback, mp4 encoding, the timeline) on the
input clip played in a loop until `--frames`, and samples every `--every` frames:
anonymous memory (RssAnon + VmSwap: the heap, where a leak lands; the target is on it),
RSS, wgpu-py's live objects by type (wgpu.diagnostics.object_counts), the native
wgpu-core registries' kept objects (wgpu_native_counts), the GPU bytes of live buffers
and textures, and Python's allocated blocks (sys.getallocatedblocks: growth there is
Python objects, growth in anonymous memory only is native). The parent prints a markdown
table (memory start / end, slope in MB/min and KB/frame by least squares over the
samples after `--warmup` frames, object count growth) under the stamp line
(benchmarks/common.py; the adapter the children ran on) and writes the samples as JSON.
Target (issue 14): slope < 1 MB/min.
A child per effect: each starts from a fresh process, so one effect's memory is not
counted against the next.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.common import Bench, adapter_record, table

DEFAULT_MODELS = {
    "face-mesh": ("face_detection_short_range", "face_landmark"),
    "segmentation": ("selfie_segmentation",),
    "face-detection": ("face_detection_short_range",),
}
TARGET_MB_PER_MIN = 1.0  # issue 14's bound on RSS growth


def anon_mb() -> float | None:
    """Anonymous resident memory + swap in MiB (Linux): the heap, where a leak lands. RSS
    also counts file-backed pages (lavapipe's LLVM is ~100 MB of them) that the kernel
    evicts and maps back at will: one soak saw RSS drop 298 -> 190 MB mid-run."""
    try:
        with open("/proc/self/status") as f:
            fields = dict(line.split(":", 1) for line in f if ":" in line)
        kb = int(fields["RssAnon"].split()[0]) + int(fields.get("VmSwap", "0 kB").split()[0])
        return kb / 1024
    except (OSError, KeyError, ValueError):
        return None


def rss_mb() -> float:
    """Resident set size of this process in MiB (Linux /proc; else the peak from getrusage)."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    except OSError:
        import resource

        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return peak / (2**20 if sys.platform == "darwin" else 2**10)


def gpu_objects() -> dict:
    """Live wgpu objects: wgpu-py's wrappers by type, wgpu-core's kept objects, GPU bytes."""
    import wgpu

    counts = wgpu.diagnostics.object_counts.get_dict()
    out = {
        "py": {k: v["count"] for k, v in counts.items() if k != "total" and v["count"]},
        "py_total": counts["total"]["count"],
        "gpu_bytes": counts["total"].get("resource_mem", 0),
    }
    try:
        native = wgpu.diagnostics.wgpu_native_counts.get_dict()
        out["native_total"] = sum(v["count"] for v in native.values())
    except Exception:  # another backend, or a wgpu without the native report
        out["native_total"] = None
    return out


def sample(frame: int, t0: float) -> dict:
    """The memory and object figures now; `t_s`: seconds since `t0` (a sample's time, not a
    timed call: the slope is fitted over them)."""
    # Free unreachable cycles first: wgpu objects of garbage made before the run (e.g. an
    # earlier test's engine in the same process) would otherwise be released whenever the
    # collector happens to run and show up as a change between two samples.
    gc.collect()
    rss, anon = rss_mb(), anon_mb()
    return {"frame": frame, "t_s": time.perf_counter() - t0, "rss_mb": rss,
            "anon_mb": rss if anon is None else anon, "py_blocks": sys.getallocatedblocks(),
            **gpu_objects()}  # fmt: skip


class LoopingSource:
    """A video file played again and again until `frames`."""

    kind = "video"

    def __init__(self, path: str, frames: int):
        from app.sources import open_source

        self.path = path
        self._src = open_source(path)
        self.name, self.size, self.fps = f"{path} (looped)", self._src.size, self._src.fps
        self.count, self.index, self.loops = frames, 0, 0
        self.skipped, self.concealed, self.frames_skipped = [], [], 0

    def read(self):
        from app.sources import open_source

        if self.index >= self.count:
            return None
        frame = self._src.read()
        if frame is None:  # the end of the clip: open it again (exercises the decoder too)
            self._src.close()
            self._src = open_source(self.path)
            self.loops += 1
            frame = self._src.read()
        frame.index = self.index
        self.index += 1
        return frame

    @property
    def frames_read(self) -> int:
        return self.index

    def close(self) -> None:
        self._src.close()


def soak_effect(effect: str, style: str | None, frames: int, every: int,
                input_path: str) -> dict:  # fmt: skip
    """One effect in this process: the headless path on a looped clip; the samples."""
    from app.headless import run_headless
    from app.models import load_model
    from app.options import build_parser
    from app.pipeline import make_pipeline
    from engine.catalog.manifest import model_path
    from engine.gpu.device import shared_context

    models = [str(model_path(m)) for m in DEFAULT_MODELS[effect]]
    argv = [a for m in models for a in ("--model", m)] + ["--effect", effect, "--headless"]
    args = build_parser().parse_args(argv + (["--style", style] if style else []))
    specs = [load_model(m) for m in models]
    source = LoopingSource(input_path, frames)
    ctx = shared_context()
    pipeline = make_pipeline(args, ctx, specs, effect, source.size, "bgra8unorm")
    # sampled in the loop's thread right after a frame is finished: no encoder is being
    # recorded then (the source is read on a worker thread, frames overlap: app/headless.py)
    t0, samples, finish = time.perf_counter(), [], pipeline.finish

    def finish_and_sample(pending):
        rec = finish(pending)
        if (rec.index + 1) % every == 0:
            samples.append(sample(rec.index + 1, t0))
        return rec

    pipeline.finish = finish_and_sample
    samples.append(sample(0, t0))
    try:
        with tempfile.TemporaryDirectory() as tmp:
            code = run_headless(pipeline, source, Path(tmp) / "soak.mp4", progress=False,
                                report=False)  # fmt: skip
    finally:
        pipeline.effect.solution.close()
    return {"effect": effect, "style": pipeline.effect.style_name, "frames": frames,
            "exit": code, "adapter": adapter_record(ctx), "loops": source.loops,
            "samples": samples}  # fmt: skip


def run_child(effect: str, style: str | None, frames: int, every: int, input_path: str,
              out_json: str) -> None:  # fmt: skip
    Path(out_json).write_text(json.dumps(soak_effect(effect, style, frames, every, input_path)))


def slope(samples: list[dict], warmup: int, key: str = "rss_mb") -> tuple[float, float]:
    """Least-squares growth of `key` after `warmup` frames: (per minute, per frame)."""
    import numpy as np

    s = [x for x in samples if x["frame"] >= warmup] or samples
    if len(s) < 2:
        return 0.0, 0.0
    t = np.array([x["t_s"] for x in s]) / 60.0
    f = np.array([x["frame"] for x in s], np.float64)
    y = np.array([x[key] for x in s], np.float64)
    return float(np.polyfit(t, y, 1)[0]), float(np.polyfit(f, y, 1)[0])


def summarize(run: dict, warmup: int) -> dict:
    """The table row of one child's run: the target is on anonymous memory (anon_mb())."""
    s = run["samples"]
    per_min, per_frame = slope(s, warmup, "anon_mb")
    rss_min, _ = slope(s, warmup, "rss_mb")
    after = [x for x in s if x["frame"] >= warmup] or s
    first, last = after[0], s[-1]
    native = [x["native_total"] for x in after]
    return {
        "effect": run["effect"], "style": run["style"], "frames": run["frames"],
        "minutes": (last["t_s"] - s[0]["t_s"]) / 60.0,
        "anon_start_mb": s[0]["anon_mb"], "anon_warm_mb": first["anon_mb"],
        "anon_end_mb": last["anon_mb"], "rss_warm_mb": first["rss_mb"],
        "rss_end_mb": last["rss_mb"], "rss_slope_mb_per_min": rss_min,
        "slope_mb_per_min": per_min, "slope_kb_per_frame": per_frame * 1024,
        "py_blocks": (first["py_blocks"], last["py_blocks"]),
        "py_objects": (first["py_total"], last["py_total"]),
        "native_objects": (native[0], native[-1]),
        "gpu_bytes": (first["gpu_bytes"], last["gpu_bytes"]),
        "ok": per_min < TARGET_MB_PER_MIN and last["py_total"] <= first["py_total"],
        "exit": run["exit"],
    }  # fmt: skip


HEADER = ["effect", "style", "frames", "min", "anon MB start -> warm -> end", "slope MB/min",
          "KB/frame", "RSS MB warm -> end (slope)", "Python blocks", "wgpu-py objects",
          "wgpu-core objects", "GPU MB", "< 1 MB/min"]  # fmt: skip


def markdown(rows: list[dict], warmup: int) -> str:
    cells = []
    for r in rows:
        mb = tuple(f"{b / 2**20:.1f}" for b in r["gpu_bytes"])
        cells.append([
            r["effect"], r["style"], r["frames"], f"{r['minutes']:.1f}",
            f"{r['anon_start_mb']:.0f} -> {r['anon_warm_mb']:.1f} -> {r['anon_end_mb']:.1f}",
            f"{r['slope_mb_per_min']:.2f}", f"{r['slope_kb_per_frame']:.2f}",
            f"{r['rss_warm_mb']:.0f} -> {r['rss_end_mb']:.0f} ({r['rss_slope_mb_per_min']:.2f})",
            f"{r['py_blocks'][0]} -> {r['py_blocks'][1]}",
            f"{r['py_objects'][0]} -> {r['py_objects'][1]}",
            f"{r['native_objects'][0]} -> {r['native_objects'][1]}", f"{mb[0]} -> {mb[1]}",
            "yes" if r["ok"] else "NO",
        ])  # fmt: skip
    return "\n".join([*table(HEADER, cells, "llrrlrrllllll"), "",
                      f"slope over the samples after frame {warmup}"])  # fmt: skip


def _runs(effects: list[str], styles: str) -> list[tuple[str, str | None]]:
    from app.effects import EFFECTS

    if styles == "default":
        return [(e, None) for e in effects]
    return [(e, s) for e in effects for s in EFFECTS[e].styles]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m benchmarks.app.soak", description=__doc__.split("\n")[0]
    )
    p.add_argument("--frames", type=int, default=3000)
    p.add_argument("--every", type=int, default=100, help="sample every N frames")
    p.add_argument("--warmup", type=int, default=300, help="frames left out of the slope")
    p.add_argument("--effects", default=",".join(DEFAULT_MODELS))
    p.add_argument("--styles", choices=("default", "all"), default="default")
    p.add_argument("--input", default=None, help="video to loop (default: the sample clip)")
    p.add_argument("--json", metavar="OUT.json", help="write the rows and every sample")
    p.add_argument("--child", nargs=2, metavar=("EFFECT", "STYLE"), help=argparse.SUPPRESS)
    p.add_argument("--child-out", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.input is None:
        from engine.catalog.paths import assets_dir

        args.input = str(assets_dir() / "sample.mp4")
    if args.child:
        effect, style = args.child
        run_child(effect, None if style == "-" else style, args.frames, args.every, args.input,
                  args.child_out)  # fmt: skip
        return 0
    effects = [e.strip() for e in args.effects.split(",") if e.strip()]
    bad = [e for e in effects if e not in DEFAULT_MODELS]
    if bad:
        p.error(f"unknown effect(s) {', '.join(bad)}; choose from {', '.join(DEFAULT_MODELS)}")
    bench = Bench(__spec__.name, argv)
    runs, rows = [], []
    for effect, style in _runs(effects, args.styles):
        with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as tmp:
            out = tmp.name
        cmd = [sys.executable, "-m", "benchmarks.app.soak", "--child", effect, style or "-",
               "--child-out", out, "--frames", str(args.frames), "--every", str(args.every),
               "--input", args.input]  # fmt: skip
        print(f"soak: {effect} {style or '(default style)'}, {args.frames} frames ...",
              file=sys.stderr, flush=True)  # fmt: skip
        proc = subprocess.run(cmd)
        if proc.returncode != 0:
            print(f"soak: {effect}: the child failed (exit {proc.returncode})", file=sys.stderr)
            return 1
        run = json.loads(Path(out).read_text())
        os.unlink(out)
        bench.adapter = run["adapter"]  # the same in every child
        runs.append(run)
        rows.append(summarize(run, args.warmup))
    bench.report(markdown(rows, args.warmup), {"rows": rows, "runs": runs}, args.json)
    return 0 if all(r["ok"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
