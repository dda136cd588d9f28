"""engine-latency: NAS-Bench-101 models, their measured latency, and latency predictors.

    engine-latency enumerate                      # every cell -> data/latency/space.jsonl.gz
    engine-latency build CELL.json -o m.tflite    # one network as a .tflite
    engine-latency measure --cells 3000           # -> data/latency/<adapter>.csv.gz
    engine-latency measure --models models/*.tflite --out data/latency/lavapipe-models.csv.gz
    engine-latency measure --shard 0/6 --lock m.lock --out part-0.csv.gz   # 1 of 6 on a GPU
    engine-latency merge all.csv.gz part-*.csv.gz # the shards as one dataset
    engine-latency measure-ops                    # single-op models for the look-up table
    engine-latency measure-fixed                  # the host's fixed cost of run() (fitted/)
    engine-latency fit                            # predictors -> data/latency/predictors/
    engine-latency report                         # accuracy table, plots -> out/latency/
    engine-latency report --target gpu --second B.csv.gz   # GPU time; adapting to class B
    engine-latency agree FIRST.csv.gz SECOND.csv.gz   # which statistic repeats (label)
    engine-latency calibrate                      # the current speed (predict then uses it)
    engine-latency predict MODEL.tflite           # "12.3 ms" + per-dispatch breakdown
    engine-latency memo models/*.tflite           # ship their work-group choices (predict)
    engine-latency search --flops 20e6            # fastest predicted cells under a budget

Errors (missing dataset, unsupported model, ...) are one line on stderr, exit code 2.
The predict path imports no GPU code and creates no device (docs/latency.md).
"""

from __future__ import annotations

import argparse
import json
import sys
from functools import partial
from pathlib import Path

from engine.errors import EngineError
from engine.latency.predictors import TARGETS

DATA = Path("data/latency")
SPACE = DATA / "space.jsonl.gz"
TARGET_HELP = ("the label: a statistic of each cell's runs (default repeat.LABEL; mean: "
               "LETI's; datasets before the round-robin protocol: mean or median), or gpu: "
               "the GPU time of its profiled dispatches (timestamp queries)")  # fmt: skip


AFTER_INTERRUPT = {  # what an interrupted command leaves, said after "interrupted"
    "measure": " (run it again: it resumes where it stopped)",
    "enumerate": " (run it again: it resumes where it stopped)",
    "calibrate": " (nothing kept: predict uses the calibration before, if any)",
}


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args) or 0
    except (EngineError, ValueError, OSError) as exc:
        print(f"engine-latency: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(
            f"engine-latency: interrupted{AFTER_INTERRUPT.get(args.command, '')}", file=sys.stderr
        )
        return 130


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="engine-latency", description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="command", required=True)

    e = sub.add_parser("enumerate", help="write every unique NAS-Bench-101 cell (resumable)")
    e.add_argument("--out", default=str(SPACE))
    e.set_defaults(func=_enumerate)

    b = sub.add_parser("build", help="one cell (JSON {matrix, ops}) -> .tflite")
    b.add_argument("cell", help="a JSON file or string with 'matrix' and 'ops'")
    b.add_argument("-o", "--out", required=True)
    b.add_argument("--config", default="{}", help="NetConfig fields as JSON")
    b.set_defaults(func=_build)

    m = sub.add_parser("measure", help="measure models on the engine and LiteRT (resumable)")
    m.add_argument("--cells", type=int, default=3000, help="uniform sample of the space")
    m.add_argument(
        "--small",
        type=int,
        default=0,
        help="extra cells with <= 5 vertices (held-out architecture test)",
    )
    m.add_argument("--seed", type=int, default=0)
    m.add_argument("--space", default=str(SPACE), help="enumerated space (enumerate)")
    m.add_argument("--config", default="{}", help="NetConfig fields as JSON")
    m.add_argument("--models", nargs="*", help="measure these .tflite files instead")
    m.add_argument(
        "--kernels",
        type=int,
        default=0,
        help="measure this many generated single-layer models instead "
        "(engine.latency.kernels: per-kernel data for the dispatch predictor)",
    )
    m.add_argument(
        "--repeat",
        help="measure again the first --cells cells of this dataset "
        "(into --out: the noise floor of `report --repeat`)",
    )
    m.add_argument("--out", help="dataset (default data/latency/<adapter>.csv.gz)")
    m.add_argument(
        "--shard",
        help="I/K: measure jobs I, I+K, I+2K ... only (K processes, each with its own --out)",
    )
    m.add_argument(
        "--lock",
        help="a file the K processes share: one at a time times its group on the adapter "
        "while the others compile (POSIX)",
    )
    _engine_args(m)
    m.add_argument("--runs", type=int, default=50)
    m.add_argument("--warmup", type=int, default=5)
    m.add_argument("--block", type=int, default=5, help="timed runs per visit (round-robin)")
    m.add_argument("--max-std", type=float, default=0.5, help="LiteRT: restart above std/mean")
    m.add_argument("--restarts", type=int, default=1, help="LiteRT: at most this many")
    m.add_argument("--profile-runs", type=int, default=3, help="Engine.profile() runs")
    m.add_argument("--litert-threads", type=int, default=1, help="0: skip LiteRT")
    m.add_argument("--no-progress", action="store_true")
    m.set_defaults(func=_measure)

    o = sub.add_parser("measure-ops", help="single-op models of a dataset's layers (LUT)")
    o.add_argument("--dataset", help="default data/latency/<adapter>.csv.gz")
    o.add_argument("--out", help="default <dataset>.ops.csv.gz")
    _engine_args(o)
    o.add_argument("--runs", type=int, default=30)
    o.add_argument("--warmup", type=int, default=5)
    o.add_argument("--max-std", type=float, default=0.5)
    o.add_argument("--restarts", type=int, default=1)
    o.add_argument("--no-progress", action="store_true")
    o.set_defaults(func=_measure_ops)

    x = sub.add_parser("measure-fixed", help="the host's fixed cost of run(): microbenchmark + fit")
    x.add_argument("--out", help="default engine/latency/fitted/fixed/<adapter>.json")
    _engine_args(x)
    _timing_args(x)
    x.set_defaults(func=_measure_fixed)

    c = sub.add_parser(
        "calibrate",
        help="carry the installed predictor to this machine's "
        "current speed (a few minutes of measurement; predict then uses it for this adapter: "
        "--adapter NAME on an adapter other than lavapipe)",
    )
    c.add_argument(
        "--kernels",
        type=int,
        default=None,
        help="generated layers to measure (default: calibrate.COUNT, 150)",
    )
    _engine_args(c)
    _timing_args(c)
    c.add_argument("--no-progress", action="store_true")
    c.set_defaults(func=_calibrate)

    f = sub.add_parser("fit", help="fit every predictor on a dataset's training split")
    f.add_argument("--dataset", default=str(DATA / "lavapipe.csv.gz"))
    f.add_argument("--train", type=float, default=0.05, help="training fraction")
    f.add_argument("--kernels", help="generated single-layer models (measure --kernels)")
    f.add_argument("--seed", type=int, default=0)
    f.add_argument("--out", default=str(DATA / "predictors"))
    f.add_argument("--target", choices=TARGETS, help=TARGET_HELP)
    f.add_argument(
        "--install",
        action="store_true",
        help="also install the dispatch predictor as the package default",
    )
    f.set_defaults(func=_fit)

    r = sub.add_parser("report", help="accuracy table (markdown + JSON) and scatter plots")
    r.add_argument("--dataset", default=str(DATA / "lavapipe.csv.gz"))
    r.add_argument("--models", help="measured models/ dataset (beyond the training space)")
    r.add_argument("--repeat", help="a second measurement of some cells (noise floor)")
    r.add_argument(
        "--second",
        help="the same cells measured on another adapter class (adaptation from 10 and "
        "100 of its models)",
    )
    r.add_argument(
        "--kernels",
        help="generated single-layer models (measure --kernels): "
        "adds the row (e+) and feeds the beyond-the-space predictor",
    )
    r.add_argument("--seed", type=int, default=0)
    r.add_argument("--target", choices=TARGETS, help=TARGET_HELP)
    r.add_argument("--out", default="out/latency")
    r.set_defaults(func=_report)

    a = sub.add_parser("agree", help="per statistic, the cells two measurements agree on")
    a.add_argument("first", help="a dataset")
    a.add_argument("second", help="the same cells measured again (measure --repeat)")
    a.add_argument("--json", action="store_true")
    a.set_defaults(func=_agree)

    g = sub.add_parser("merge", help="the shards of one measurement (measure --shard) as one")
    g.add_argument("out", help="the new dataset")
    g.add_argument("parts", nargs="+", help="the shards' datasets")
    g.add_argument("--order", help="the dataset they measured again: its row order")
    g.set_defaults(func=_merge)

    q = sub.add_parser("predict", help="predicted latency of a .tflite without running it")
    q.add_argument("model")
    q.add_argument("--adapter", help="adapter name (default: the fitted one, lavapipe)")
    q.add_argument("--precision", default="fp32", choices=("fp32", "fp16"))
    which = q.add_mutually_exclusive_group()
    which.add_argument(
        "--predictor",
        help="a predictor JSON (default: this engine's calibration "
        "for the adapter, engine-latency calibrate, else the installed one)",
    )
    which.add_argument(
        "--installed",
        action="store_true",
        help="the installed predictor even where a calibration exists",
    )
    q.add_argument("--sync", default="sleep", choices=("sleep", "spin"), help="run()'s wait")
    q.add_argument("--top", type=int, default=0, help="show only the N slowest dispatches")
    q.add_argument("--json", action="store_true")
    q.set_defaults(func=_predict)

    w = sub.add_parser("memo", help="ship the work-group choices of these models' layers")
    w.add_argument("models", nargs="+", help="the app's models (.tflite)")
    w.add_argument("--adapter", help="adapter name (default: the fitted one, lavapipe)")
    w.add_argument("--out", help="default engine/latency/fitted/workgroups/<adapter>.json")
    w.set_defaults(func=_memo)

    s = sub.add_parser("search", help="fastest predicted cells within a FLOPs budget")
    s.add_argument("--flops", type=float, required=True, help="budget (max FLOPs)")
    s.add_argument("--band", type=float, default=0.8, help="keep FLOPs >= band x budget")
    s.add_argument("--method", choices=("random", "evolution"), default="evolution")
    s.add_argument("--budget", type=int, default=2000, help="cells evaluated")
    s.add_argument("--seed", type=int, default=0)
    s.add_argument("--top", type=int, default=5)
    s.add_argument("--measure", action="store_true", help="measure the winners")
    s.add_argument("--predictor")
    s.add_argument("--config", default="{}")
    s.set_defaults(func=_search)
    return p


def _engine_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--adapter", help="substring of the adapter (default: ENGINE_ADAPTER/best)")
    p.add_argument("--precision", default="fp32", choices=("fp32", "fp16"))


def _timing_args(p: argparse.ArgumentParser) -> None:
    """measure.Protocol's runs, warm-up and block (measure-fixed, calibrate)."""
    p.add_argument("--runs", type=int, default=50)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--block", type=int, default=5, help="timed runs per visit (round-robin)")


def _protocol(args):
    from engine.latency import measure

    return measure.Protocol(args.warmup, args.runs, block=args.block)


def _config(text: str):
    from engine.latency.builder import NetConfig

    return NetConfig.from_dict(json.loads(text))


def _enumerate(args) -> int:
    import time

    from engine.latency.space import enumerate_space

    t0 = time.perf_counter()
    n = enumerate_space(args.out)
    print(f"{n} unique cells in {args.out} ({time.perf_counter() - t0:.0f} s)")
    return 0


def _build(args) -> int:
    from engine.latency.builder import build_tflite
    from engine.latency.cell import Cell

    text = Path(args.cell).read_text() if Path(args.cell).exists() else args.cell
    cell = Cell.from_dict(json.loads(text))
    Path(args.out).write_bytes(build_tflite(cell, _config(args.config)))
    print(f"{args.out}: cell {cell.hash()}")
    return 0


def _measure(args) -> int:
    from engine.gpu.device import shared_context
    from engine.latency import measure
    from engine.latency.dataset import default_path
    from engine.latency.dispatches import adapter_slug

    shard = measure.parse_shard(args.shard)  # a bad --shard: an error before any device
    ctx = shared_context(args.adapter)
    protocol = measure.Protocol(args.warmup, args.runs, args.max_std, args.restarts, args.block)
    # each job as a maker, so that a shard builds (graph, .tflite) for its own jobs only
    if args.models:
        makers = [partial(measure.model_job, p) for p in args.models]
        out = args.out or default_path(f"{adapter_slug(ctx.info)}-models")
    elif args.kernels:
        from engine.latency.kernels import kernel_graphs, kernel_job

        makers = [
            partial(kernel_job, key, g) for _, key, g in kernel_graphs(args.kernels, args.seed)
        ]
        out = args.out or default_path(f"{adapter_slug(ctx.info)}-kernels")
    elif args.repeat:
        makers = _repeat_jobs(args)
        out = args.out or default_path(f"{adapter_slug(ctx.info)}-repeat")
    else:
        makers = _cell_jobs(args)
        out = args.out or default_path(adapter_slug(ctx.info))
    makers = measure.shard(makers, shard)
    jobs = (make() for make in makers)
    n = measure.run(jobs, len(makers), out, ctx, args.precision, protocol,
                    args.litert_threads or None, args.profile_runs,
                    progress=not args.no_progress, lock=args.lock)  # fmt: skip
    print(f"{n} new rows in {out}")
    return 0


def _cell_jobs(args) -> list:
    from engine.latency import measure
    from engine.latency.space import load_space, sample_cells, sample_small

    if not Path(args.space).exists():
        raise EngineError(f"{args.space}: no enumerated space (run: engine-latency enumerate)")
    space = load_space(args.space)
    config = _config(args.config)
    cells = [(c, "uniform") for c in sample_cells(args.cells, args.seed, space)]
    if args.small:
        taken = {c.hash() for c, _ in cells}
        cells += [(c, "small") for c in sample_small(args.small, args.seed, space, exclude=taken)]
    return [partial(measure.cell_job, c, config, tag) for c, tag in cells]


def _repeat_jobs(args) -> list:
    from engine.latency import measure
    from engine.latency.builder import NetConfig
    from engine.latency.cell import Cell
    from engine.latency.dataset import read_rows

    rows = [r for r in read_rows(args.repeat) if r.get("adjacency")][: args.cells]
    return [partial(measure.cell_job, Cell.make(r["adjacency"], r["ops"]),
                    NetConfig.from_dict(r["config"]), r["sample"]) for r in rows]  # fmt: skip


def _measure_ops(args) -> int:
    from engine.gpu.device import shared_context
    from engine.latency import lut, measure
    from engine.latency.dataset import default_path
    from engine.latency.dispatches import adapter_slug

    ctx = shared_context(args.adapter)
    data = Path(args.dataset or default_path(adapter_slug(ctx.info)))
    out = Path(args.out or lut.ops_path(data))
    protocol = measure.Protocol(args.warmup, args.runs, args.max_std, args.restarts)
    n = lut.measure_ops(data, out, ctx, args.precision, protocol, not args.no_progress)
    print(f"{n} new single-op rows in {out}")
    return 0


def _measure_fixed(args) -> int:
    from engine.gpu.device import shared_context
    from engine.latency import fixed

    path = fixed.write(shared_context(args.adapter), args.out, _protocol(args))
    params = json.loads(path.read_text())["params"]
    print(f"{path}: {json.dumps(params)}")
    return 0


def _calibrate(args) -> int:
    from engine.gpu.device import shared_context
    from engine.latency import calibrate
    from engine.latency.predict import describe
    from engine.latency.predictors import load

    count = calibrate.COUNT if args.kernels is None else args.kernels
    calibrate.check_count(count, "--kernels")  # before a device is opened
    path = calibrate.calibrate(shared_context(args.adapter), args.precision, count,
                               protocol=_protocol(args), progress=not args.no_progress)  # fmt: skip
    print(f"{path}: {describe(load(path).meta)}")
    return 0


def _fit(args) -> int:
    from engine.latency.predictors import fit_all
    from engine.latency.repeat import LABEL

    paths = fit_all(args.dataset, args.out, args.train, args.seed, install=args.install,
                    target=args.target or LABEL, kernels=args.kernels)  # fmt: skip
    for p in paths:
        print(p)
    return 0


def _report(args) -> int:
    from engine.latency.repeat import LABEL
    from engine.latency.report import write_report

    paths = write_report(args.dataset, args.out, args.seed, args.models, args.repeat,
                         args.target or LABEL, args.kernels, args.second)  # fmt: skip
    for p in paths:
        print(p)
    return 0


def _agree(args) -> int:
    from engine.latency import repeat
    from engine.latency.dataset import read_rows

    agree = repeat.agreement(read_rows(args.first), read_rows(args.second))
    if not agree:
        raise ValueError(f"{args.second}: no cell of {args.first} measured again")
    print(json.dumps(agree, indent=1) if args.json else repeat.markdown(agree))
    print(f"repeats best within ±10%: {repeat.best(agree)}", file=sys.stderr)
    return 0


def _merge(args) -> int:
    from engine.latency.dataset import merge

    n = merge(args.parts, args.out, args.order)
    print(f"{n} rows in {args.out}")
    return 0


def _predict(args) -> int:
    from engine.latency.predict import format_prediction, predict_file

    pred = predict_file(args.model, args.adapter, args.precision, args.predictor, args.sync,
                        args.installed)  # fmt: skip
    if args.json:
        print(json.dumps(pred.to_dict(), indent=1))
    else:
        print(format_prediction(pred, args.top))
    return 0


def _memo(args) -> int:
    from engine.latency import wgmemo
    from engine.latency.dispatches import AdapterProfile
    from engine.latency.predict import predictor_path
    from engine.latency.predictors import load

    profile = AdapterProfile.from_dict(load(predictor_path(args.adapter, "fp32")).meta["profile"])
    out = wgmemo.write(args.models, profile, args.out and Path(args.out))
    print(f"{out}: {len(json.loads(out.read_text())['choices'])} work-group choices")
    return 0


def _search(args) -> int:
    from engine.latency.search import run_search

    run_search(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
