"""ar-demo's time to first frame, cold and warm, in the window (under Xvfb) and headless.

    python -m benchmarks.app.startup_bench [--effects segmentation face-mesh] [--json out.json]
        [--checkout /path/to/other/checkout]     # also time another checkout's window
        [--kernels staged optimized]             # this checkout per --kernels mode

Each row is a fresh `ar-demo` process on the sample clip (assets/sample.mp4):
- cold: an empty Mesa shader cache (MESA_SHADER_CACHE_DIR = a new folder): a first run;
- warm: the same folder again, as the cold run left it: every later run;
- window rows run under their own Xvfb (black root) and read both the app's `--stats`
  start-up times (seconds since launch: window open, first content = the start-up screen
  presented, ready, first frame = the first effect frame) and Xvfb's framebuffer every
  0.1 s (`picture`: the first non-black screenshot, seconds since the process was
  started, as a person would see it);
- headless rows: ready (effect built and run once) and first frame written.
`--checkout` adds window rows for another checkout (e.g. before this change), from the
screenshots only (its --stats may have no start-up times). `--kernels` runs this
checkout once per ar-demo `--kernels` mode (rows "this/staged", ...); without it each
mode's default (window: staged, headless: optimized).
Rounds (`--repeat`) interleave the contenders: per effect and round the cold runs of each
checkout and mode one after the other, then their warm runs; rows are medians.
Prints a markdown table under the stamp line (benchmarks/common.py: the load before and
after; the adapter a fresh process picks, as ar-demo's do); `--json` writes every figure.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from app.options import KERNEL_MODES
from benchmarks.common import ROOT, Bench, probe_adapter, table
from engine.catalog.manifest import model_path
from engine.catalog.paths import assets_dir

MODELS = {"segmentation": ["selfie_segmentation"],
          "face-mesh": ["face_detection_short_range", "face_landmark"]}  # fmt: skip
FIGURES = ("window_open", "first_content", "ready", "first_frame", "optimized_kernels")


def _xvfb() -> tuple[subprocess.Popen, str, Path]:
    n = next(n for n in range(120, 300) if not Path(f"/tmp/.X11-unix/X{n}").exists())
    fb = Path(tempfile.mkdtemp(prefix="startup-fb-"))
    proc = subprocess.Popen(["Xvfb", f":{n}", "-screen", "0", "800x600x24", "-fbdir", str(fb),
                             "-nolisten", "tcp", "-br"], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)  # fmt: skip
    deadline = time.time() + 10
    while not Path(f"/tmp/.X11-unix/X{n}").exists():
        if time.time() > deadline:
            raise SystemExit("startup_bench: Xvfb did not start")
        time.sleep(0.05)
    return proc, f":{n}", fb / "Xvfb_screen0"


def _picture(fb: Path) -> bool:
    """Anything non-black in the window's area of Xvfb's framebuffer (XWD)?"""
    import numpy as np

    data = fb.read_bytes()
    h = struct.unpack(">25I", data[:100])
    start = h[0] + 12 * h[19]
    rows = np.frombuffer(data[start : start + h[12] * h[5]], np.uint8).reshape(h[5], h[12])
    return bool(rows[:480, : 640 * 4].mean() > 10)


def run_once(effect: str, mode: str, cache: Path, checkout: Path, xvfb=None,
             kernels: str | None = None) -> dict:  # fmt: skip
    """One ar-demo process; its start-up figures (seconds)."""
    stats = Path(tempfile.mkdtemp(prefix="startup-stats-")) / "stats.json"
    models = [a for m in MODELS[effect] for a in ("--model", str(model_path(m)))]
    cmd = [sys.executable, "-m", "app.cli", *models, "--input", str(assets_dir() / "sample.mp4"),
           "--stats", str(stats), *(["--kernels", kernels] if kernels else [])]  # fmt: skip
    env = {**os.environ, "MESA_SHADER_CACHE_DIR": str(cache), "MESA_SHADER_CACHE_DISABLE": "false"}
    if mode == "headless":
        cmd += ["--headless", "--output", str(stats.with_suffix(".mp4")), "--frames", "10",
                "--no-progress"]  # fmt: skip
    else:
        cmd += ["--frames", "30"]
        env["DISPLAY"] = xvfb[1]
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=checkout, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)  # fmt: skip
    picture = None
    while proc.poll() is None:
        time.sleep(0.1)
        if mode == "window" and picture is None and xvfb[2].exists() and _picture(xvfb[2]):
            picture = time.perf_counter() - t0
    err = proc.stderr.read()
    if proc.returncode != 0:
        raise SystemExit(f"startup_bench: {' '.join(cmd)} failed:\n{err[-2000:]}")
    out = {"picture": picture} if mode == "window" else {}
    if stats.exists():
        out.update(json.loads(stats.read_text()).get("startup_s", {}))
    shutil.rmtree(stats.parent, ignore_errors=True)
    return out


def measure(effects: list[str], checkouts: dict[str, Path], repeat: int,
            kernels: list[str] | None = None) -> list[dict]:  # fmt: skip
    """Every row `repeat` times, the contenders interleaved: per effect and round, the cold
    runs of each (checkout, mode) one after the other, then their warm runs."""
    runs = []
    # not interleave(): a run is an ar-demo process whose figures are its own stats and
    # screenshots, and each warm run must follow the cold run that filled its cache
    xvfb = _xvfb()
    # label -> (checkout, --kernels or None: the app's default), this checkout first
    mine = {f"this/{k}": (checkouts["this"], k) for k in kernels} if kernels else {
        "this": (checkouts["this"], None)}  # fmt: skip
    others = {label: (path, None) for label, path in checkouts.items() if label != "this"}
    contenders = {**mine, **others}
    try:
        for effect in effects:
            combos = [(label, mode) for label in contenders
                      for mode in (("window", "headless") if label in mine else ("window",))]  # fmt: skip
            for _ in range(repeat):
                caches = {c: Path(tempfile.mkdtemp(prefix="mesa-cache-")) for c in combos}
                for state in ("cold", "warm"):  # warm: the cache its cold run filled
                    for label, mode in combos:
                        checkout, kernel_mode = contenders[label]
                        figures = run_once(effect, mode, caches[label, mode], checkout, xvfb,
                                           kernel_mode)  # fmt: skip
                        runs.append({"effect": effect, "checkout": label, "mode": mode,
                                     "cache": state, **figures})  # fmt: skip
                        print(f"startup_bench: {runs[-1]}", file=sys.stderr, flush=True)
                for cache in caches.values():
                    shutil.rmtree(cache, ignore_errors=True)
    finally:
        xvfb[0].terminate()
    return runs


def medians(runs: list[dict]) -> list[dict]:
    """One row per (effect, checkout, mode, cache): the median of each figure."""
    keys = ("effect", "checkout", "mode", "cache")
    groups: dict[tuple, list[dict]] = {}
    for r in runs:
        groups.setdefault(tuple(r[k] for k in keys), []).append(r)
    rows = []
    for key, rs in groups.items():
        row = dict(zip(keys, key, strict=True), runs=len(rs))
        for k in ("picture", *FIGURES):
            values = [r[k] for r in rs if r.get(k) is not None]
            row[k] = statistics.median(values) if values else None
        rows.append(row)
    return rows


HEADER = ["effect", "checkout", "mode", "Mesa cache", "runs", "window open",
          "picture (screenshot)", "first content", "ready", "first frame", "optimized kernels"]  # fmt: skip
COLUMNS = ("window_open", "picture", "first_content", "ready", "first_frame", "optimized_kernels")


def markdown(rows: list[dict]) -> str:
    cells = [[r["effect"], r["checkout"], r["mode"], r["cache"], r["runs"],
              *(f"{r[k]:.1f}" if r.get(k) is not None else "-" for k in COLUMNS)]
             for r in rows]  # fmt: skip
    return "\n".join([*table(HEADER, cells, "llll" + "r" * 7), "",
                      "seconds since the process started"])  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--effects", nargs="+", default=list(MODELS), choices=list(MODELS))
    p.add_argument("--checkout", type=Path, help="another checkout to time (window only)")
    p.add_argument("--repeat", type=int, default=1, help="rounds (median per row)")
    p.add_argument("--kernels", nargs="+", choices=KERNEL_MODES,
                   help="time this checkout with each of these ar-demo --kernels modes")  # fmt: skip
    p.add_argument("--json", type=Path, help="write every run and the rows as JSON")
    args = p.parse_args(argv)
    if shutil.which("Xvfb") is None:
        p.error("Xvfb is needed for the window rows (Debian: xvfb)")
    checkouts = {"this": ROOT}
    if args.checkout:
        checkouts["other"] = args.checkout.resolve()
    bench = Bench(__spec__.name, argv, adapter=probe_adapter())  # probed before the gate
    runs = measure(args.effects, checkouts, args.repeat, args.kernels)
    rows = medians(runs)
    bench.report(markdown(rows), {"rows": rows, "runs": runs}, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
