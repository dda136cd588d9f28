"""Submit plans for this adapter's class, measured on real models beside LiteRT's GPU.

A submit plan (engine/gpu/submits.py) says after how many dispatches run() submits
early, so the GPU computes while Python records the rest. This tool times plans on one
Engine per model, in one process:
- each plan is a contender: the engine's runtime switched to it, then run() (numpy in,
  outputs read back, what a caller waits for);
- `--litert`: LiteRT's GPU accelerator (CompiledModel; ai-edge-litert) on the same model
  and inputs is one more contender, so its ratio is measured side by side;
- contenders interleaved (engine/tools/bench/ab.py): rounds of `--block` runs each, the
  order reversed every other round; medians over all runs;
- `--recording direct,wgpu-py`: each plan also with dispatches recorded through wgpu-py's
  methods instead of wgpu-native's functions (engine/gpu/recorder.py);
- `--sync sleep,spin`: each of those also waiting for the GPU the other way
  (engine/gpu/sync.py: sleep parks the thread, spin polls);
- every contender's outputs must equal the first's bit for bit (an error otherwise).

    python -m benchmarks.engine.submit_sweep MODEL... [--plans none,8,8/32] [--rounds 15]
        [--block 10] [--litert] [--precision fp32|fp16] [--recording direct,wgpu-py]
        [--sync sleep,spin] [--json F]

Plans: "none" (one submit at the end), "F" (one early submit after F dispatches),
"F/E" (after F, then every E). Timings decide nothing here: a winning plan is copied
into submits.py by hand, with these figures as its provenance.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from benchmarks.common import interleave, table
from benchmarks.engine.sweep import run_sweeps
from engine.errors import EngineError
from engine.gpu.submits import SubmitPlan
from engine.gpu.sync import SYNC_MODES
from engine.precision import PRECISIONS

DEFAULT_PLANS = "none,4,8,16,4/16,8/16,8/32,16/32"
DEFAULTS = ("direct", "sleep")  # left out of the contenders' names


def parse_plan(text: str) -> SubmitPlan:
    """A plan from "none", "F" or "F/E" (a ValueError naming the text otherwise)."""
    text = text.strip()
    if text == "none":
        return SubmitPlan()
    try:
        parts = [int(p) for p in text.split("/")]
        if len(parts) > 2:
            raise ValueError
        return SubmitPlan(*parts)
    except (ValueError, TypeError):
        raise ValueError(f"{text!r}: expected none, F or F/E with whole numbers >= 1") from None


def sweep_model(path: str, plans: dict[str, SubmitPlan], rounds: int, block: int,
                litert: bool, precision: str = "fp32",
                recordings: tuple[str, ...] = ("direct",),
                syncs: tuple[str, ...] = ("sleep",)) -> dict:  # fmt: skip
    """One model: each plan's (and recording's, and sync mode's) median run() ms, LiteRT
    GPU's beside, outputs checked."""
    from engine.gpu.engine import Engine
    from engine.tools.bench.engine_runner import random_feeds
    from engine.tools.bench.peers import ModelSource, litert_gpu_row

    engine = Engine.from_tflite(path, precision=precision)
    feeds = random_feeds(engine.source_graph)
    stats: dict[str, dict] = {}

    def runner(name: str, plan: SubmitPlan, direct: bool, sync: str):
        def run():
            runtime = engine.runtime
            if runtime.submits is not plan:  # a switch, not per-run work in the timing
                runtime.submits = plan
            runtime.direct_recording = direct
            out = engine.run(feeds, sync)
            stats[name] = {"submits": engine.stats.submits, "encode_ms": engine.stats.encode_ms,
                           "wait_ms": engine.stats.wait_ms}  # fmt: skip
            return out

        return run

    runs = {}
    for sync in syncs:
        for recording in recordings:
            for text, plan in plans.items():
                name = " ".join([text] + [w for w in (recording, sync) if w not in DEFAULTS])
                runs[name] = runner(name, plan, recording == "direct", sync)
    first = next(iter(runs))
    want = runs[first]()
    for name, run in runs.items():  # warm-up, and the outputs must not move
        got = run()
        if any(not np.array_equal(got[k], want[k]) for k in want):
            raise EngineError(f"{Path(path).stem}: {name} changed the outputs")
    peer = None
    if litert:
        peer = litert_gpu_row(ModelSource(Path(path).stem, Path(path).read_bytes(), path),
                              feeds, runs=3, warmup=2)  # fmt: skip
        if peer.get("status") == "ok":
            runs["litert-gpu"] = peer["_run"]
    ab = interleave(runs, rounds, block)
    base = ab["medians"][first]
    rows = []
    for name in runs:
        med = ab["medians"][name]
        row = {"contender": name, "median_ms": med, "p90_ms": ab["p90"][name],
               "vs_first": base / med}  # fmt: skip
        if name in stats:
            row.update(stats[name])
        if "litert-gpu" in ab["medians"]:
            row["litert_over_this"] = ab["medians"]["litert-gpu"] / med
        rows.append(row)
    note = None if peer is None or peer.get("status") == "ok" else peer.get("reason")
    # a run's dispatches, the input and output conversions included: what plans count
    return {"model": Path(path).stem, "precision": precision, "first": first,
            "dispatches": engine.stats.dispatches, "rows": rows, "litert_note": note}  # fmt: skip


def markdown(report: dict) -> str:
    lines = [f"{report['rounds']} rounds of {report['block']}", ""]
    for m in report["models"]:
        header = ["contender", "submits", "run() ms median", "p90", f"{m['first']} / this",
                  "LiteRT GPU / this", "encode ms"]  # fmt: skip
        rows = [[r["contender"], r.get("submits", "-"), f"{r['median_ms']:.3f}",
                 f"{r['p90_ms']:.3f}", f"{r['vs_first']:.2f}",
                 f"{r['litert_over_this']:.2f}" if "litert_over_this" in r else "-",
                 f"{r['encode_ms']:.3f}" if "encode_ms" in r else "-"] for r in m["rows"]]  # fmt: skip
        lines += [f"### {m['model']} ({m['precision']}, {m['dispatches']} dispatches)", "",
                  *table(header, rows, "lrrrrrr")]  # fmt: skip
        if m["litert_note"]:
            lines.append(f"\nLiteRT GPU: {m['litert_note']}")
        lines.append("")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="submit_sweep", description=__doc__.splitlines()[0])
    p.add_argument("models", nargs="+")
    p.add_argument("--plans", default=DEFAULT_PLANS,
                   help=f"comma list of none | F | F/E (default {DEFAULT_PLANS})")  # fmt: skip
    p.add_argument("--rounds", type=int, default=15, help="alternating rounds (15)")
    p.add_argument("--block", type=int, default=10, help="runs per contender per round (10)")
    p.add_argument("--litert", action="store_true", help="add LiteRT's GPU accelerator")
    p.add_argument("--precision", default="fp32", choices=PRECISIONS,
                   help="the engine's (LiteRT's GPU accelerator computes in fp16)")  # fmt: skip
    p.add_argument("--recording", default="direct",
                   help="comma list of direct | wgpu-py: how dispatches are recorded "
                        "(engine/gpu/recorder.py); each plan runs with each")  # fmt: skip
    p.add_argument("--sync", default="sleep",
                   help="comma list of sleep | spin: how run() waits for the GPU "
                        "(engine/gpu/sync.py); each contender above waits each way")  # fmt: skip
    p.add_argument("--json", type=Path, help="write the report as JSON")
    args = p.parse_args(argv)
    if args.rounds < 1 or args.block < 1:
        p.error("--rounds and --block must be >= 1")
    try:
        plans = {text.strip(): parse_plan(text) for text in args.plans.split(",") if text.strip()}
    except ValueError as exc:
        p.error(f"--plans: {exc}")
    if not plans:
        p.error("--plans: give at least one plan")
    recordings = tuple(r.strip() for r in args.recording.split(",") if r.strip())
    if not recordings or not set(recordings) <= {"direct", "wgpu-py"}:
        p.error(f"--recording: {args.recording!r}: expected direct and/or wgpu-py")
    syncs = tuple(m.strip() for m in args.sync.split(",") if m.strip())
    if not syncs or not set(syncs) <= set(SYNC_MODES):
        p.error(f"--sync: {args.sync!r}: expected {' and/or '.join(SYNC_MODES)}")

    def sweep(path: str) -> dict:
        return sweep_model(path, plans, args.rounds, args.block, args.litert, args.precision,
                           recordings, syncs)  # fmt: skip

    return run_sweeps(__spec__.name, argv, args.models, sweep, markdown, args.json,
                      f"{len(plans)} plans", rounds=args.rounds, block=args.block)  # fmt: skip


if __name__ == "__main__":
    sys.exit(main())
