"""Benchmark our engine on one graph: init split, warm-up, timed runs, GPU time per op.

Init phases, each measured where it happens:
- import: load_tflite() (timed by the caller, None for in-memory graphs);
- device: shared_context() (adapter + device; paid once per process);
- engine phases: whatever Engine.init_ms reports (kernel build, pipelines, ...);
- unattributed: Engine() wall time minus those phases (transforms run in the
  constructor untimed, so this is "transforms + untimed setup");
- first run: the first run() (drivers such as lavapipe compile shaders lazily here).
Timed runs: wall and process CPU time around run(), RunStats per run averaged.
GPU-resident path: encode() + submit + queue wait, no transfers (when all ops are on
the GPU). GPU time per dispatch: Engine.profile(feeds) when the engine has it (see
DISPATCH_HOOK), else reported as not available with the reason.

Usage: bench_engine(graph, feeds, runs=100, warmup=10, precision="fp32", sync="sleep")
"""

from __future__ import annotations

import time
from collections import defaultdict

import numpy as np

from engine.model.cost import flops_by_op
from engine.model.ir import Graph
from engine.tools.bench.timing import summarize, time_runs

DISPATCH_HOOK = "profile"  # Engine method: feeds -> records with op_index, op_type, gpu_ms
_STAT_FIELDS = (
    "dispatches",
    "submits",
    "uploads",
    "readbacks",
    "encode_ms",
    "wait_ms",
    "wait_cpu_ms",
    "total_ms",
)


def model_flops(graph: Graph) -> int:
    """FLOPs of one inference of `graph` (multiply-add = 2), from engine.model.cost."""
    return int(sum(r.flops for r in flops_by_op(graph)))


def random_feeds(graph: Graph, seed: int = 0) -> dict[str, np.ndarray]:
    """Uniform [-1, 1) float32 values for every graph input, by tensor name."""
    rng = np.random.default_rng(seed)
    return {
        graph.tensors[t].name: rng.uniform(-1, 1, graph.tensors[t].shape).astype(np.float32)
        for t in graph.inputs
    }


def time_device(adapter: str | None = None) -> tuple[object, float]:
    """The shared GPU context and the ms it took to get it (0 when already made)."""
    from engine.gpu.device import shared_context

    t0 = time.perf_counter()
    ctx = shared_context(adapter)
    return ctx, (time.perf_counter() - t0) * 1e3


def bench_engine(
    graph: Graph,
    feeds: dict,
    *,
    runs: int,
    warmup: int,
    precision: str = "fp32",
    sync: str = "sleep",
    storage: str = "auto",
    transforms: bool = True,
    adapter: str | None = None,
    import_ms: float | None = None,
    device_ms: float | None = None,
) -> dict:
    """Everything engine-bench reports about the engine on `graph`; 'outputs' holds the
    last run's outputs (for the cross-check, not for JSON). Raises what the engine raises."""
    from engine.gpu.engine import Engine

    flops = model_flops(graph)
    t0 = time.perf_counter()
    engine = Engine(
        graph,
        precision=precision,
        sync=sync,
        storage=storage,
        transforms=transforms,
        adapter=adapter,
    )
    ctor_ms = (time.perf_counter() - t0) * 1e3
    phases = {k: float(v) for k, v in dict(getattr(engine, "init_ms", {}) or {}).items()}
    t0 = time.perf_counter()
    outputs = engine.run(feeds)
    first_run_ms = (time.perf_counter() - t0) * 1e3
    for _ in range(max(0, warmup - 1)):  # the first run is the first warm-up run
        engine.run(feeds)

    wall, cpu, stats = [], [], defaultdict(float)
    for _ in range(runs):
        w0, c0 = time.perf_counter(), time.process_time()
        outputs = engine.run(feeds)
        wall.append((time.perf_counter() - w0) * 1e3)
        cpu.append((time.process_time() - c0) * 1e3)
        for f in _STAT_FIELDS:
            stats[f] += float(getattr(engine.stats, f, 0.0))
    summary = summarize(wall)
    op_count = len(engine.source_graph.ops)
    dispatch_count = int(engine.dispatch_count)
    init = {
        "import_ms": import_ms,
        "device_ms": device_ms,
        "engine_phases_ms": phases,
        "constructor_ms": ctor_ms,
        "unattributed_ms": max(0.0, ctor_ms - sum(phases.values())),
        "first_run_ms": first_run_ms,
    }
    init["total_ms"] = sum(
        init[k] or 0.0 for k in ("import_ms", "device_ms", "constructor_ms", "first_run_ms")
    )
    return {
        "backend": "engine",
        "status": "ok",
        "adapter": engine.ctx.name,
        "precision": precision,
        "sync": sync,
        "storage": engine.storage,  # the kind used ("auto" resolved)
        "storage_requested": storage,
        "textures": len(engine.placement.textures),
        "transforms": transforms,
        "init": init,
        "time_ms": summary.as_dict(),
        "cpu_ms_per_run": float(np.mean(cpu)),
        "per_run": {f: stats[f] / runs for f in _STAT_FIELDS},
        "dispatch_count": dispatch_count,
        "op_count": op_count,
        "graph_op_count": len(engine.graph.ops),
        "dispatches_per_op": dispatch_count / op_count if op_count else None,
        "flops": flops,
        "gflops_per_s": flops / (summary.median * 1e6) if summary.median > 0 else None,
        "fallback_ops": list(getattr(engine, "fallback_ops", [])),
        "resident": resident_time(engine, runs),
        "gpu_time": gpu_time_per_op(engine, feeds),
        "outputs": outputs,
        # for the interleaved A/B (engine/tools/bench/ab.py); not in the JSON
        "_run": lambda: engine.run(feeds),
        "init_ms": ctor_ms + first_run_ms,
    }


def resident_time(engine, runs: int, warmup: int = 3) -> dict:
    """The GPU-resident path (what the AR app runs): encode() into a fresh encoder,
    submit, wait for the queue; no uploads or readbacks. Wall ms per run."""
    if not hasattr(engine, "encode"):
        return {"available": False, "reason": "engine has no encode()"}
    if getattr(engine, "fallback_ops", None):
        return {
            "available": False,
            "reason": "CPU fallback ops: encode() needs every op on the GPU",
        }
    import wgpu

    dev = engine.ctx.device
    usage = wgpu.BufferUsage
    src = dev.create_buffer(size=16, usage=usage.COPY_SRC)
    fence = dev.create_buffer(size=16, usage=usage.MAP_READ | usage.COPY_DST)

    def once():  # wait by mapping a buffer copied after the pass (what run() does too)
        enc = dev.create_command_encoder()
        engine.encode(enc)
        enc.copy_buffer_to_buffer(src, 0, fence, 0, 16)
        dev.queue.submit([enc.finish()])
        fence.map_sync(wgpu.MapMode.READ)
        fence.unmap()

    try:
        wall, cpu = time_runs(once, runs, warmup)
    except Exception as exc:  # a young API: report, do not fail the whole row
        return {"available": False, "reason": f"{type(exc).__name__}: {exc}"}
    return {
        "available": True,
        "time_ms": summarize(wall).as_dict(),
        "cpu_ms_per_run": float(np.mean(cpu)),
    }


def _field(record, name: str):
    return record[name] if isinstance(record, dict) else getattr(record, name)


def _has(record, name: str) -> bool:
    return name in record if isinstance(record, dict) else hasattr(record, name)


def gpu_time_per_op(engine, feeds, repeats: int = 3, top: int = 10) -> dict:
    """GPU ms per op from timestamp queries (median of `repeats`), top ops by time."""
    hook = getattr(engine, DISPATCH_HOOK, None)
    if not engine.ctx.has_timestamps:
        return {"available": False, "reason": f"{engine.ctx.name} lacks timestamp-query"}
    if hook is None:
        return {
            "available": False,
            "reason": f"engine exposes no per-dispatch timing (needs Engine.{DISPATCH_HOOK})",
        }
    per_op: dict[tuple[int, str], list[float]] = defaultdict(list)
    counts: dict[tuple[int, str], int] = {}
    kernels: dict[tuple[int, str], set[str]] = defaultdict(set)
    totals = []
    for _ in range(repeats):
        sums: dict[tuple[int, str], float] = defaultdict(float)
        n: dict[tuple[int, str], int] = defaultdict(int)
        for r in hook(feeds):
            key = (int(_field(r, "op_index")), str(_field(r, "op_type")))
            sums[key] += float(_field(r, "gpu_ms"))
            n[key] += 1
            kernels[key].add(str(_field(r, "kernel")) if _has(r, "kernel") else "")
        for key, ms in sums.items():
            per_op[key].append(ms)
        counts.update(n)
        totals.append(sum(sums.values()))
    rows = [
        {
            "op_index": i,
            "op_type": t,
            "kernel": ",".join(sorted(k for k in kernels[(i, t)] if k)),
            "dispatches": counts[(i, t)],
            "gpu_ms": float(np.median(v)),
        }
        for (i, t), v in per_op.items()
    ]
    rows.sort(key=lambda r: -r["gpu_ms"])
    return {"available": True, "total_gpu_ms": float(np.median(totals)), "top": rows[:top]}
