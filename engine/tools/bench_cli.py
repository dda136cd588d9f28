"""engine-bench: latency, init split and throughput of the engine next to its peers.

Like TFLite's benchmark_model: import and compile each model (init split), warm up,
time N runs (mean / median / min / p90), count dispatches against the model's ops,
GFLOP/s from the model's FLOPs, GPU time per op where the engine exposes timestamp
queries; then the same inputs on LiteRT (XNNPACK at each thread count, GPU
accelerator) and ONNX Runtime (WebGPU EP, labelled by where the nodes ran).
Prints a markdown table; --markdown/--json write the full report.

usage: engine-bench MODEL... [--runs 100] [--warmup 10] [--precision fp32|fp16]
                    [--sync sleep|spin] [--storage auto|buffer|texture|tune]
                    [--peers litert,litert-gpu,onnx|none]
                    [--threads 1,all] [--json OUT.json] [--markdown OUT.md]
                    [--ab-rounds 10] [--ab-block 5] [--max-load 0.5] [--require-quiet]
       engine-bench --op conv3x3|conv1x1|depthwise3x3 [--shape 128x128x32] ...
       engine-bench --workgroups MODEL... [--wg-sample 24] [--wg-runs 3] [--runs 30]
         work group policies per conv/depthwise signature and per model
         (engine/tools/bench/workgroups.py)
Interleaved A/B (--ab-rounds, default 10): the engine and each LiteRT row again, in
alternating rounds in this process, medians and the ratio peer / engine, init of both,
outputs compared (engine/tools/bench/ab.py). The load average is recorded per model;
rows of a busy machine are marked, or --require-quiet refuses to run
(engine/tools/bench/load.py).
Exit status: 0 all engine rows ran; 1 an engine row failed (reported in its row);
2 bad arguments, a missing/unreadable model or no usable adapter (one line on stderr);
3 --require-quiet on a busy machine.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from engine.errors import DeviceError, EngineError
from engine.gpu.storage_choice import STORAGE_OPTIONS
from engine.gpu.sync import SYNC_MODES
from engine.precision import PRECISIONS
from engine.tools.bench import peers as peer_mod
from engine.tools.bench.ab import ab_rows
from engine.tools.bench.engine_runner import bench_engine, model_flops, random_feeds, time_device
from engine.tools.bench.load import MAX_LOAD_PER_CPU, LoadGate
from engine.tools.bench.machine import machine_info, usable_cpus
from engine.tools.bench.report import markdown, to_json
from engine.tools.bench.single_op import OPS, bench_graph, parse_shape


def _parse_peers(text: str) -> list[str]:
    if text.strip().lower() in ("none", ""):
        return []
    names = [p.strip().lower() for p in text.split(",") if p.strip()]
    bad = [p for p in names if p not in peer_mod.PEERS]
    if bad:
        raise argparse.ArgumentTypeError(
            f"unknown peer(s) {', '.join(bad)}; choose from {', '.join(peer_mod.PEERS)} or none"
        )
    return names


def _parse_threads(text: str) -> list[int]:
    out = []
    for part in text.split(","):
        part = part.strip().lower()
        if part == "all":
            n = usable_cpus()
        elif part.isdigit() and int(part) > 0:
            n = int(part)
        else:
            raise argparse.ArgumentTypeError(
                f"threads {text!r}: comma list of positive ints or 'all'"
            )
        if n not in out:
            out.append(n)
    return out


def _parse_shape(text: str) -> tuple[int, int, int]:
    try:
        return parse_shape(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="engine-bench",
        description="Benchmark the WebGPU engine on .tflite models (or one op) next to LiteRT and ONNX Runtime.",
    )
    p.add_argument("models", nargs="*", metavar="MODEL", help=".tflite files")
    p.add_argument(
        "--op", action="append", choices=sorted(OPS), help="single-op model (repeatable)"
    )
    p.add_argument(
        "--shape", type=_parse_shape, default=(128, 128, 32), help="HxWxC for --op (128x128x32)"
    )
    p.add_argument("--runs", type=int, default=100, help="timed runs (100)")
    p.add_argument(
        "--warmup", type=int, default=10, help="warm-up runs, the first one timed apart (10)"
    )
    p.add_argument("--precision", choices=tuple(PRECISIONS), default="fp32")
    p.add_argument("--sync", choices=SYNC_MODES, default="sleep")
    p.add_argument(
        "--storage",
        choices=STORAGE_OPTIONS,
        default="auto",
        help="intermediate tensors in buffers or textures; auto: the adapter's rule; tune: "
        "measured once per adapter (cached)",
    )
    p.add_argument("--no-transforms", action="store_true", help="compile the graph as imported")
    p.add_argument(
        "--adapter", default=None, help="adapter name substring (else ENGINE_ADAPTER/best)"
    )
    p.add_argument(
        "--peers",
        type=_parse_peers,
        default=list(peer_mod.PEERS),
        help="comma list of litert, litert-gpu, onnx; or none (all)",
    )
    p.add_argument(
        "--threads", type=_parse_threads, default="1,all", help="LiteRT CPU threads (1,all)"
    )
    p.add_argument(
        "--onnx-python",
        default=None,
        help=f"interpreter with onnxruntime + tflite2onnx (${peer_mod.ONNX_PYTHON_ENV})",
    )
    p.add_argument("--seed", type=int, default=0, help="seed of the random inputs")
    p.add_argument(
        "--ab-rounds",
        type=int,
        default=10,
        help="interleaved A/B rounds of the engine vs each LiteRT row, order alternating "
        "(10; 0: none)",
    )
    p.add_argument("--ab-block", type=int, default=5, help="runs per contender per round (5)")
    p.add_argument(
        "--max-load",
        type=float,
        default=MAX_LOAD_PER_CPU,
        help=f"1-min load per CPU above which the machine is busy ({MAX_LOAD_PER_CPU})",
    )
    p.add_argument(
        "--require-quiet",
        action="store_true",
        help="refuse to run (exit 3) on a busy machine instead of marking the rows",
    )
    p.add_argument(
        "--workgroups",
        action="store_true",
        help="compare work group policies (table, heuristic, tune) per signature and model",
    )
    p.add_argument(
        "--wg-sample", type=int, default=24, help="--workgroups: exhaustive sample size (24)"
    )
    p.add_argument("--wg-runs", type=int, default=3, help="--workgroups: timings per candidate")
    p.add_argument("--json", type=Path, help="write the full report as JSON")
    p.add_argument("--markdown", type=Path, help="write the full report as markdown")
    return p


def _sources(args) -> list[tuple[peer_mod.ModelSource, object, float | None]]:
    """(source, graph, import ms) per model or op; EngineError on a bad model file."""
    from engine.model.importer import load_tflite
    from engine.model.writer import write_tflite

    out = []
    for path in args.models:
        t0 = time.perf_counter()
        graph = load_tflite(path)
        import_ms = (time.perf_counter() - t0) * 1e3
        name = Path(path).stem
        out.append(
            (peer_mod.ModelSource(name, Path(path).read_bytes(), str(path)), graph, import_ms)
        )
    for op in args.op or []:
        graph = bench_graph(op, args.shape, seed=args.seed)
        out.append((peer_mod.ModelSource(graph.name, write_tflite(graph)), graph, None))
    return out


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def _log(msg: str) -> None:
    print(f"engine-bench: {msg}", file=sys.stderr, flush=True)


def bench_one(source, graph, import_ms, device_ms, args) -> dict:
    """Engine row + peer rows for one model."""
    from engine.model.writer import write_tflite

    feeds = random_feeds(graph, args.seed)
    gate = LoadGate.check(args.max_load)
    res = {
        "model": source.name,
        "path": source.path,
        "op_count": len(graph.ops),
        "op_histogram": graph.op_histogram(),
        "flops": model_flops(graph),
        "inputs": {k: list(v.shape) for k, v in feeds.items()},
    }
    _log(f"{source.name}: engine, {args.warmup} warm-up + {args.runs} runs")
    try:
        res["engine"] = bench_engine(
            graph,
            feeds,
            runs=args.runs,
            warmup=args.warmup,
            precision=args.precision,
            sync=args.sync,
            storage=args.storage,
            transforms=not args.no_transforms,
            adapter=args.adapter,
            import_ms=import_ms,
            device_ms=device_ms,
        )
    except Exception as exc:  # the engine is young: a failing model is a row, not a crash
        kind = "" if isinstance(exc, EngineError) else f"{type(exc).__name__}: "
        res["engine"] = peer_mod.skipped("engine", f"{kind}{exc}", status="failed")
        res["engine"].update(precision=args.precision, sync=args.sync, storage=args.storage)
        _log(f"{source.name}: engine failed: {res['engine']['reason']}")
    res["peers"] = []
    if "litert" in args.peers:
        _log(f"{source.name}: litert at threads {args.threads}")
        res["peers"] += peer_mod.litert_rows(source, feeds, args.threads, args.runs, args.warmup)
    if "litert-gpu" in args.peers:
        _log(f"{source.name}: litert-gpu")
        res["peers"].append(peer_mod.litert_gpu_row(source, feeds, args.runs, args.warmup))
    if "onnx" in args.peers:
        _log(f"{source.name}: onnx")
        python = args.onnx_python or peer_mod.default_onnx_python()
        res["peers"].append(
            peer_mod.onnx_row(source, write_tflite(graph), args.runs, args.warmup, python)
        )
    eng = res["engine"]
    if args.ab_rounds > 0 and eng.get("status") == "ok":
        _log(f"{source.name}: interleaved A/B, {args.ab_rounds} rounds of {args.ab_block} runs")
        res["ab"] = ab_rows(eng, res["peers"], args.ab_rounds, args.ab_block)
    res["load"] = gate.after().as_dict()
    refs = [r for r in res["peers"] if r["backend"] == "litert-xnnpack" and "outputs" in r]
    ref = refs[0] if refs else None
    if eng.get("status") == "ok" and ref is not None:
        eng["max_error_vs_litert"] = peer_mod.max_error(ref["outputs"], eng["outputs"])
    return res


def main(argv: list[str] | None = None) -> int:
    """Console entry point; returns the exit status (see the module docstring)."""
    try:
        return _main(argv)
    except DeviceError as exc:  # the device lost mid-run
        print(f"engine-bench: {exc}", file=sys.stderr)
        return 2


def _main(argv: list[str] | None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not args.models and not args.op:
        parser.error("give at least one MODEL or --op")
    if args.runs < 1 or args.warmup < 0:
        parser.error("--runs must be >= 1 and --warmup >= 0")
    if isinstance(args.threads, str):
        args.threads = _parse_threads(args.threads)
    if args.workgroups:
        return _workgroups(args, parser)
    try:
        sources = _sources(args)
        ctx, device_ms = time_device(args.adapter)
    except (EngineError, OSError) as exc:  # bad/missing model, no adapter
        print(f"engine-bench: {exc}", file=sys.stderr)
        return 2
    gate = LoadGate.check(args.max_load)
    if gate.busy:
        if args.require_quiet:
            print(f"engine-bench: machine busy ({gate.label()}); --max-load "
                  f"{args.max_load} per CPU; not running (drop --require-quiet to mark "
                  "the rows instead)", file=sys.stderr)  # fmt: skip
            return 3
        _log(f"machine busy ({gate.label()}): rows are marked 'busy'")
    machine = machine_info(ctx)
    settings = {
        "runs": args.runs,
        "warmup": args.warmup,
        "precision": args.precision,
        "sync": args.sync,
        "storage": args.storage,
        "transforms": not args.no_transforms,
        "peers": args.peers,
        "threads": args.threads,
        "seed": args.seed,
        "ops": args.op or [],
        "shape": list(args.shape) if args.op else None,
        "ab_rounds": args.ab_rounds,
        "ab_block": args.ab_block,
        "max_load_per_cpu": args.max_load,
    }
    results = []
    for k, (source, graph, import_ms) in enumerate(sources):
        results.append(bench_one(source, graph, import_ms, device_ms if k == 0 else None, args))
    text = markdown(results, machine, settings)
    print(text, end="")
    if args.markdown:
        _write(args.markdown, text)
    if args.json:
        _write(args.json, to_json(results, machine, settings) + "\n")
    return 0 if all(r["engine"].get("status") == "ok" for r in results) else 1


def _workgroups(args, parser) -> int:
    import json

    from engine.tools.bench.workgroups import bench_workgroups, markdown_report

    if not args.models:
        parser.error("--workgroups needs MODEL files")
    missing = [m for m in args.models if not Path(m).exists()]
    if missing:
        print(f"engine-bench: no such model: {', '.join(map(str, missing))}", file=sys.stderr)
        return 2
    report = bench_workgroups(
        args.models, runs=args.wg_runs, sample=args.wg_sample, latency_runs=min(args.runs, 30)
    )
    text = markdown_report(report)
    print(text)
    if args.markdown:
        _write(args.markdown, text)
    if args.json:
        _write(args.json, json.dumps(report, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
