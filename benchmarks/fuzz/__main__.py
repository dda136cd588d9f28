"""python -m benchmarks.fuzz: corrupt copies of models must run or raise ModelError.

    python -m benchmarks.fuzz --count 700 --jobs 2 --json out/fuzz.json   # 3 core models
    python -m benchmarks.fuzz --replay face_landmark:123 --seed 0         # one, traceback

Prints a markdown table (outcomes, ModelErrors by stage, mutation kinds) and every failure
(an exception other than ModelError, a crash, a hang or > 4 GiB resident) with the
(model, seed, index) that reproduces it, under the stamp line (benchmarks/common.py; the
adapter a fresh process picks, as the workers do). Exit status 1 when any mutant failed or
a ModelError message is not one line naming the file.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import traceback
from pathlib import Path

from benchmarks.common import Bench, probe_adapter, table, timed
from benchmarks.fuzz.harness import FAILURES, OUTCOMES, run_fuzz, summary

CORE = ("face_detection_short_range", "selfie_segmentation", "face_landmark")


def _models(names: list[str]) -> dict[str, Path]:
    from engine.catalog.paths import models_dir

    out = {}
    for name in names:
        path = Path(name) if name.endswith(".tflite") else models_dir() / f"{name}.tflite"
        if not path.is_file():
            raise SystemExit(f"fuzz: {path}: no such model (run `make models`)")
        out[path.stem] = path
    return out


def _replay(spec: str, seed: int) -> int:
    from benchmarks.fuzz.child import run_one
    from benchmarks.fuzz.mutate import mutant

    name, index = spec.rsplit(":", 1)
    path = _models([name])[Path(name).stem]
    m = mutant(path.read_bytes(), path.stem, seed, int(index))
    out = Path(tempfile.mkdtemp(prefix="fuzz-replay-")) / f"{path.stem}.mutant{index}.tflite"
    out.write_bytes(m.data)
    print(f"{m.kinds}: {m.detail}\nfile: {out}")
    outcome, stage, exc = run_one(out)
    print(f"{outcome} at {stage}")
    if exc is not None:
        traceback.print_exception(exc)
    return 0 if outcome in ("runs", "model_error") else 1


def markdown(s: dict, seconds: float, args) -> str:
    o = s["outcomes"]
    lines = [
        f"{s['mutants']} mutants of {', '.join(args.model)} (seed {args.seed}, "
        f"{args.count} each), {seconds:.0f} s on {args.jobs} workers",
        "",
        *table(["outcome", "mutants"], [[k, o[k]] for k in OUTCOMES]),
        "",
        *table(["ModelError stage", "mutants"], list(s["model_error_stages"].items())),
        "",
        f"ModelError messages not one line naming the file: {len(s['bad_messages'])}",
    ]
    for f in s["failures"]:
        lines.append(f"- {f['outcome']} {f['name']}:{f['index']} ({f['detail']}): {f['error']} "
                     f"at {f['stage']} {f['where']}: {f['message'][:200]}")  # fmt: skip
    for f in s["bad_messages"][:20]:
        lines.append(f"- bad message {f['name']}:{f['index']}: {f['message'][:200]!r}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m benchmarks.fuzz", description=__doc__.split("\n")[0]
    )
    p.add_argument("--model", nargs="+", default=list(CORE), help="model names or .tflite paths")
    p.add_argument("--count", type=int, default=100, help="mutants per model")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--start", type=int, default=0, help="first mutant index")
    p.add_argument("--jobs", type=int, default=2, help="worker processes at a time")
    p.add_argument("--batch", type=int, default=50, help="mutants per worker process")
    p.add_argument("--timeout", type=float, default=60.0, help="seconds per mutant")
    p.add_argument("--json", type=Path, help="write the summary and every result here")
    p.add_argument("--log", type=Path, help="the workers' stderr goes here")
    p.add_argument("--replay", metavar="MODEL:INDEX", help="run one mutant here, traceback")
    args = p.parse_args(argv)
    if args.replay:
        return _replay(args.replay, args.seed)
    models = _models(args.model)
    bench = Bench(__spec__.name, argv, adapter=probe_adapter())  # probed before the gate
    results, ms = timed(lambda: run_fuzz(models, args.count, seed=args.seed, start=args.start,
                                         jobs=args.jobs, batch=args.batch, timeout=args.timeout,
                                         log_path=args.log))  # fmt: skip
    s = summary(results)
    doc = {**s, "args": {k: str(v) for k, v in vars(args).items()},
           "results": [r.__dict__ for r in results]}  # fmt: skip
    bench.report(markdown(s, ms / 1e3, args), doc, args.json)
    failed = sum(s["outcomes"][k] for k in FAILURES)
    return 1 if failed or s["bad_messages"] else 0


if __name__ == "__main__":
    sys.exit(main())
