"""`engine-latency predict` against the engine's measured run(), in the same minute.

    python -m benchmarks.engine.predict_vs_run models/face_detection_short_range.tflite \
        models/face_landmark.tflite models/selfie_segmentation.tflite \
        [--runs 60] [--sync sleep] [--json vs.json]

Per model: the installed prediction (predict_file: GPU time + the host's fixed cost, and
the dispatch predictor's own total) and, where this engine has one, the same-day
calibration's (engine-latency calibrate; both against the same measurement), then every
model's Engine (every default) timed in rounds as `engine-latency measure` does
(engine.latency.measure: warm-up, visits of 1 untimed + 5 timed runs, A, B, C, A, B, C
...), --runs per model. Error = predicted / measured - 1 against the statistic `fit`
labels with (engine.latency.repeat.LABEL: the median). Prints a markdown table under the
stamp line (load before and after); asserts nothing.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from benchmarks.common import Bench, table


def measure(models: list[str], runs: int, sync: str) -> tuple[list[dict], object]:
    """One row per (predictor, model): its predictions and the model's measured statistics
    (ms); and the GpuContext."""
    from engine.gpu.device import shared_context
    from engine.gpu.engine import Engine
    from engine.latency import measure as m
    from engine.latency.predict import INSTALLED, predict_file
    from engine.model.importer import load_tflite

    ctx = shared_context()
    preds = {INSTALLED: [predict_file(p, sync=sync, installed=True) for p in models]}
    calibrated = [predict_file(p, sync=sync) for p in models]
    if calibrated[0].predictor != INSTALLED:
        preds[calibrated[0].predictor] = calibrated
    graphs = [load_tflite(Path(p)) for p in models]
    engines = [Engine(g, context=ctx, sync=sync) for g in graphs]
    feeds = [m.random_feeds(g) for g in graphs]
    fns = [lambda e=e, f=f: e.run(f) for e, f in zip(engines, feeds, strict=True)]
    times = m.timed_round_robin(fns, m.Protocol(runs=runs))
    measured = [{"runs": len(t), **{k.removeprefix("engine_"): v for k, v in m.summary(t).items()}}
                for t in times]  # fmt: skip
    rows = []
    for which, predicted in preds.items():
        for path, pred, stats in zip(models, predicted, measured, strict=True):
            rows.append({"model": Path(path).stem, "predictor": which,
                         "predicted_ms": pred.total_ms, "gpu_ms": pred.gpu_ms,
                         "fixed_ms": pred.fixed_ms, "one_fit_ms": pred.one_fit_ms,
                         **stats})  # fmt: skip
    return rows, ctx


def markdown(rows: list[dict], label: str) -> str:
    def err(a: float, b: float) -> str:
        return f"{100 * (a / b - 1):+.1f}%"

    measured = f"{label}_ms"
    body = [[r["model"], r["predictor"].split(" (")[0], f"{r['gpu_ms']:.2f}",
             "-" if r["fixed_ms"] is None else f"{r['fixed_ms']:.2f}",
             f"{r['predicted_ms']:.2f}", f"{r[measured]:.2f}", err(r["predicted_ms"], r[measured]),
             f"{r['one_fit_ms']:.2f}", err(r["one_fit_ms"], r[measured])] for r in rows]  # fmt: skip
    head = ["model", "predictor", "GPU ms", "fixed ms", "predicted ms", f"measured {label} ms",
            "error", "one-fit ms", "one-fit error"]  # fmt: skip
    return "\n".join(table(head, body, "ll" + "r" * 7))


def main(argv: list[str] | None = None) -> int:
    from engine.latency.repeat import LABEL

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("models", nargs="+")
    p.add_argument("--runs", type=int, default=60, help="timed runs per model")
    p.add_argument("--sync", default="sleep", choices=("sleep", "spin"))
    p.add_argument("--json", type=Path, help="write the figures as JSON")
    args = p.parse_args(argv)
    bench = Bench(__spec__.name, argv)
    rows, ctx = measure(args.models, args.runs, args.sync)
    bench.use(ctx)
    bench.report(markdown(rows, LABEL), {"rows": rows, "label": LABEL, "sync": args.sync},
                 args.json)  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
