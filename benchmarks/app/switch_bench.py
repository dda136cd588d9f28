"""A planner or precision switch under load: does the display keep drawing?

    python -m benchmarks.app.switch_bench [--change planner=naive] [--model M ...]
        [--caches warm empty disabled] [--json out.json]

Each row is a fresh process running app.pipeline.FramePipeline on the sample clip into an
offscreen target, frame after frame as the window does; after 5 frames it calls
`switch(**change)` (the HUD's planner / precision switch) and keeps drawing until the new
effect is swapped in. Mesa cache states: warm (the user's cache as it is), empty (a new
MESA_SHADER_CACHE_DIR: the switch compiles on a scratch device and the display's device
loads from the cache), disabled (MESA_SHADER_CACHE_DISABLE=true: no scratch device, the
compiles run in the display's queue thread). Figures: seconds to the swap, frames drawn
meanwhile, frame time p50 and max meanwhile (ms). Prints a markdown table under the stamp
line (benchmarks/common.py; the adapter the processes ran on).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.common import ROOT, Bench, adapter_record, table
from engine.catalog.manifest import model_path
from engine.catalog.paths import assets_dir

CACHES = ("warm", "empty", "disabled")


def child(change: dict, models: list[str]) -> dict:
    """In the fresh process: switch after 5 frames, draw until swapped (at most 300 s)."""
    import numpy as np
    import wgpu

    from app.models import choose_effect, load_model
    from app.pipeline import FramePipeline
    from app.sources import open_source
    from engine.gpu.device import shared_context

    ctx = shared_context()
    specs = [load_model(model_path(m)) for m in models]
    clip = str(assets_dir() / "sample.mp4")
    p = FramePipeline(ctx, specs, choose_effect(specs, "auto"), (640, 480), "bgra8unorm")
    target = ctx.device.create_texture(size=(640, 480, 1), format="bgra8unorm",
                                       usage=wgpu.TextureUsage.RENDER_ATTACHMENT)  # fmt: skip
    view, source, times, old = target.create_view(), open_source(clip), [], p.effect
    # the display's loop as the window runs it, each frame timed while a switch is pending:
    # a loop that ends on the swap, not a count of timed calls (time_runs)
    t_end, i = time.perf_counter() + 300, 0
    while p.effect is old and time.perf_counter() < t_end:
        frame = source.read()
        if frame is None:
            source = open_source(clip)
            continue
        t = time.perf_counter()
        p.process(frame, view)
        if p.switching is not None:
            times.append(time.perf_counter() - t)
        i += 1
        if i == 5:
            p.switch(**change)
    (sw,) = p.switches or [{"ok": False, "seconds": None}]
    ms = np.array(times) * 1e3
    return {"ok": sw["ok"], "seconds": sw["seconds"], "frames_meanwhile": len(times),
            "frame_p50_ms": float(np.median(ms)) if ms.size else None,
            "frame_max_ms": float(ms.max()) if ms.size else None,
            "longest_gap_ms": sw.get("longest_frame_gap_ms"), "adapter": adapter_record(ctx)}  # fmt: skip


def run(change: str, models: list[str], cache: str) -> dict:
    env = dict(os.environ)
    folder = None
    if cache == "empty":
        folder = tempfile.mkdtemp(prefix="mesa-cache-")
        env.update(MESA_SHADER_CACHE_DIR=folder, MESA_SHADER_CACHE_DISABLE="false")
    elif cache == "disabled":
        env["MESA_SHADER_CACHE_DISABLE"] = "true"
    r = subprocess.run([sys.executable, "-m", "benchmarks.app.switch_bench", "--child", change,
                        "--model", *models], cwd=ROOT, env=env, capture_output=True,
                       text=True, check=False)  # fmt: skip
    if folder:
        subprocess.run(["rm", "-rf", folder], check=False)
    if r.returncode != 0:
        raise SystemExit(f"switch_bench: {cache}: {r.stderr.strip()[-2000:]}")
    return json.loads(r.stdout.strip().splitlines()[-1])


HEADER = ["models", "change", "Mesa cache", "swapped after s", "frames drawn meanwhile",
          "frame p50 ms", "frame max ms"]  # fmt: skip


def markdown(rows: list[dict]) -> str:
    def f(v, fmt):
        return "-" if v is None else format(v, fmt)

    cells = [["+".join(r["models"]), r["change"], r["cache"], f(r["seconds"], ".1f"),
              r["frames_meanwhile"], f(r["frame_p50_ms"], ".0f"), f(r["frame_max_ms"], ".0f")]
             for r in rows]  # fmt: skip
    return "\n".join(table(HEADER, cells, "lllrrrr"))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--change", default="planner=naive", help="KEY=VALUE for switch()")
    p.add_argument("--model", nargs="+", default=["selfie_segmentation"])
    p.add_argument("--caches", nargs="+", default=list(CACHES), choices=CACHES)
    p.add_argument("--json", type=Path)
    p.add_argument("--child", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child:
        key, value = args.child.split("=", 1)
        print(json.dumps(child({key: value}, args.model)))
        return 0
    bench = Bench(__spec__.name, argv)
    rows = []
    for cache in args.caches:
        figures = run(args.change, args.model, cache)
        bench.adapter = figures.pop("adapter")  # the same in every process
        rows.append({"models": args.model, "change": args.change, "cache": cache, **figures})
    bench.report(markdown(rows), {"rows": rows}, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
