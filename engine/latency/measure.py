"""Measure models on the engine and on LiteRT XNNPACK; write dataset rows.

Engine protocol, round-robin (for labels that repeat: docs/latency.md "Repeatable labels"):
- cells are measured in groups of `flush_every` (10): every engine of the group is built
  and warmed up (`warmup` runs), then visited in rounds, A, B, C, A, B, C ..., each
  visit one untimed run (the cell's data back in cache) and `block` timed runs, until
  each cell has `runs`; a slow drift of the machine (load, clock) hits every cell of
  the group alike, where one cell after another gave each its own moment;
- per cell: min, p10, median, mean and std of its timed runs (engine_*_ms); the label
  the predictors fit is repeat.LABEL, the statistic that repeated best (measured);
- no restart rule: a preempted visit is `block` of `runs` samples, which min, p10 and
  median shrug off.
LiteRT and the single-op layers (lut.py) keep LETI's protocol (below, `timed`).

LETI's protocol (warm-up, >= 300 runs, restart while std > 10% of mean):
- `warmup` untimed runs, then `runs` timed runs (wall clock around one call);
- when std > `max_std` x mean, start again (warm-up included), at most `restarts`
  times; the last attempt is kept and its restart count recorded.
Defaults (`--runs 50`, warm-up 5, max_std 0.5, 1 restart) are chosen for this 2-core
machine: a default-config model is ~1.6-20 ms on lavapipe, whose run-to-run std/mean is
~31% at the median even on a quiet machine, so LETI's 10% rule never passed there and
only multiplied the time by 4 (docs/latency.md); 0.5 restarts a preempted attempt. With
engine init (pipelines shared between models on one device), 3 profiled runs and LiteRT:
~90 cells a minute, 3,300 cells in 34 minutes. LETI's protocol: `--runs 300 --max-std 0.1
--restarts 3`.

Engine side: Engine(graph, context, precision) with its defaults (storage "auto",
heuristic work groups, smallest memory plan), timed around run(feeds) (upload, one
submit, readback), plus `profile_runs` Engine.profile() calls whose per-dispatch GPU
times (median) go in the row's dispatch_ms, aligned with dispatch_list (io
conversions, which profile() does not time, are null). The GPU-free dispatch list is
checked against the engine's own: a mismatch is an error, not a silent row.
LiteRT side: ai_edge_litert Interpreter(model_content, num_threads) (XNNPACK by
default), timed around invoke().
"""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Callable, Iterable
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from engine.errors import EngineError, ModelError
from engine.latency import dataset
from engine.latency.builder import NetConfig, build_graph, build_tflite
from engine.latency.cell import Cell
from engine.latency.dispatches import AdapterProfile, DispatchInfo
from engine.latency.features import static_features
from engine.model.ir import Graph


@dataclass(frozen=True)
class Protocol:
    warmup: int = 5
    runs: int = 50
    max_std: float = 0.5
    restarts: int = 1
    block: int = 5  # timed runs per visit of a cell (round-robin)


def round_robin(cells: int, rounds: int) -> list[int]:
    """The order of visits: every cell once per round, A, B, C, A, B, C ..."""
    return [i for _ in range(rounds) for i in range(cells)]


def summary(times_ms: list[float]) -> dict:
    """engine_{min,p10,median,mean,std}_ms of one cell's timed runs (p10: linear)."""
    a = np.asarray(times_ms, np.float64)
    return {"engine_min_ms": float(a.min()), "engine_p10_ms": float(np.percentile(a, 10)),
            "engine_median_ms": float(np.median(a)), "engine_mean_ms": float(a.mean()),
            "engine_std_ms": float(a.std())}  # fmt: skip


def timed_round_robin(fns: list[Callable[[], object]], protocol: Protocol) -> list[list[float]]:
    """Per function, its `protocol.runs` timed runs (ms), visited in rounds (module doc)."""
    for fn in fns:
        for _ in range(protocol.warmup):
            fn()
    times: list[list[float]] = [[] for _ in fns]
    rounds = -(-protocol.runs // protocol.block)
    for i in round_robin(len(fns), rounds):
        fns[i]()  # untimed: the other cells ran since
        for _ in range(min(protocol.block, protocol.runs - len(times[i]))):
            t0 = time.perf_counter()
            fns[i]()
            times[i].append(1e3 * (time.perf_counter() - t0))
    return times


@dataclass(frozen=True)
class Timing:
    mean_ms: float
    median_ms: float  # robust to other processes' bursts on a shared machine
    std_ms: float
    runs: int
    restarts: int


def timed(fn: Callable[[], object], protocol: Protocol) -> Timing:
    """LETI's protocol around `fn` (see the module docstring)."""
    restarts = 0
    while True:
        for _ in range(protocol.warmup):
            fn()
        times = np.empty(protocol.runs)
        for i in range(protocol.runs):
            t0 = time.perf_counter()
            fn()
            times[i] = time.perf_counter() - t0
        mean, std = float(times.mean()) * 1e3, float(times.std()) * 1e3
        if std <= protocol.max_std * mean or restarts == protocol.restarts:
            break
        restarts += 1
    return Timing(mean, float(np.median(times)) * 1e3, std, protocol.runs, restarts)


def engine_commit() -> str:
    """The git commit of the engine's checkout (short), "+dirty" when it has changes."""
    root = Path(__file__).resolve().parents[2]
    try:
        head = subprocess.run(["git", "-C", str(root), "rev-parse", "--short=12", "HEAD"],
                              capture_output=True, text=True, timeout=10, check=True)  # fmt: skip
        dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "engine", "shaders"],
                               capture_output=True, text=True, timeout=10)  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return head.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")


def random_feeds(graph: Graph, seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {
        graph.tensors[t].name: rng.uniform(-1, 1, graph.tensors[t].shape).astype(np.float32)
        for t in graph.inputs
    }


def engine_of(graph: Graph, ctx, precision: str):
    """The engine a row measures: Engine(graph, context, precision), every default."""
    from engine.gpu.engine import Engine

    return Engine(graph, context=ctx, precision=precision)


def profiled(engine, graph: Graph, ctx, profile_runs: int,
             dispatches: list[DispatchInfo]) -> list:  # fmt: skip
    """Per-dispatch GPU ms (median of `profile_runs` Engine.profile()) aligned with
    `dispatches` (io: None); [] without timestamp queries (lavapipe has none)."""
    if not (profile_runs and ctx.has_timestamps):
        return []
    feeds = random_feeds(graph)
    runs = [engine.profile(feeds) for _ in range(profile_runs)]
    ops = [d for d in dispatches if d.op_type != "io"]
    got = [(p.op_index, p.kernel) for p in runs[0]]
    want = [(d.op_index, d.kernel) for d in ops]
    if got != want:
        raise EngineError(f"{graph.name}: dispatch list differs from the engine's: {want} != {got}")
    ms = np.median([[p.gpu_ms for p in r] for r in runs], axis=0)
    it = iter(ms.tolist())
    return [None if d.op_type == "io" else round(next(it), 5) for d in dispatches]


def measure_litert(data: bytes, graph: Graph, protocol: Protocol, threads: int) -> Timing:
    from ai_edge_litert.interpreter import Interpreter

    it = Interpreter(model_content=data, num_threads=threads)
    it.allocate_tensors()
    feeds = random_feeds(graph)
    for d in it.get_input_details():
        it.set_tensor(d["index"], feeds[d["name"]])
    return timed(it.invoke, protocol)


@dataclass
class Job:
    """One model to measure: a cell under a config, or a .tflite file."""

    key_hash: str
    graph: Graph
    data: bytes
    cell: Cell | None = None
    config: NetConfig | None = None
    model: str = ""
    sample: str = "uniform"


def cell_job(cell: Cell, config: NetConfig, sample: str = "uniform") -> Job:
    p = cell.pruned()
    return Job(p.hash(), build_graph(p, config), build_tflite(p, config), p, config, "", sample)


def model_job(path: str | os.PathLike) -> Job:
    import hashlib

    from engine.model.importer import load_tflite

    data = Path(path).read_bytes()
    return Job(hashlib.sha256(data).hexdigest()[:32], load_tflite(Path(path)), data,
               model=Path(path).name, sample="model")  # fmt: skip


@dataclass
class Prepared:
    """A job with its static features, its dispatch list and its engine, ready to time."""

    job: Job
    feats: dict
    rows: list[DispatchInfo]
    engine: object
    feeds: dict


def prepare(job: Job, ctx, profile: AdapterProfile, precision: str) -> Prepared:
    feats = static_features(job.graph, profile, precision)
    rows = feats.pop("dispatch_list")
    engine = engine_of(job.graph, ctx, precision)
    return Prepared(job, feats, rows, engine, random_feeds(job.graph))


def finish(p: Prepared, times_ms: list[float], ctx, profile: AdapterProfile, precision: str,
           protocol: Protocol, litert_threads: int | None, profile_runs: int,
           commit: str) -> dict:  # fmt: skip
    """One dataset row for a prepared job and its timed runs."""
    job = p.job
    per_dispatch = profiled(p.engine, job.graph, ctx, profile_runs, p.rows)
    stats = {k: round(v, 5) for k, v in summary(times_ms).items()}
    row = {
        "hash": job.key_hash,
        "sample": job.sample,
        "model": job.model,
        "config": job.config.to_dict() if job.config else {},
        **p.feats,
        "dispatch_list": [d.to_list() for d in p.rows],
        **stats,
        "engine_runs": len(times_ms),
        "engine_restarts": 0,
        "dispatch_ms": per_dispatch,
        "adapter": profile.name,
        "device": profile.device,
        "driver": profile.driver,
        "precision": precision,
        "storage": p.engine.storage,
        "engine_commit": commit,
        "load_avg": round(os.getloadavg()[0], 2),
        "measured_at": time.strftime("%Y-%m-%dT%H:%M:%S"),
    }
    if job.cell is not None:
        row.update(vertices=job.cell.vertices, edges=job.cell.edges, ops=list(job.cell.ops),
                   adjacency=[list(r) for r in job.cell.matrix])  # fmt: skip
    if litert_threads:
        lt = measure_litert(job.data, job.graph, protocol, litert_threads)
        row.update(litert_mean_ms=round(lt.mean_ms, 5), litert_median_ms=round(lt.median_ms, 5),
                   litert_std_ms=round(lt.std_ms, 5),
                   litert_runs=lt.runs, litert_restarts=lt.restarts,
                   litert_threads=litert_threads)  # fmt: skip
    return row


def run(jobs: Iterable[Job], total: int, out: str | os.PathLike, ctx, precision: str = "fp32",
        protocol: Protocol = Protocol(), litert_threads: int | None = 1, profile_runs: int = 3,
        progress: bool = True, flush_every: int = 10, skip: set | None = None,
        lock: str | os.PathLike | None = None) -> int:  # fmt: skip
    """Measure every job whose (hash, config, precision) is not in `out` yet, `flush_every`
    at a time in rounds (module docstring); append their rows after each group. Returns
    the number of rows written. One tqdm bar over `total` jobs.

    `lock`: a file several measuring processes share (each on its own `shard`). A group's
    timing (warm-up, timed runs, profile(), LiteRT) holds it exclusively, so one process
    at a time runs on the adapter while the others build and compile their next group:
    on a GPU, where compiling a cell takes several times as long as timing it."""
    import json

    from tqdm import tqdm

    profile = AdapterProfile.from_context(ctx)
    sidecar = dataset.profile_path(out)
    sidecar.parent.mkdir(parents=True, exist_ok=True)
    sidecar.write_text(json.dumps(profile.to_dict(), indent=1) + "\n")
    done = skip if skip is not None else existing_keys(out)
    commit = engine_commit()
    written = 0
    bar = tqdm(total=total, unit="model", disable=not progress)
    group: list[Prepared] = []

    def measure_group() -> None:
        nonlocal written
        fns = [lambda p=p: p.engine.run(p.feeds) for p in group]
        rows = []
        with exclusive(lock):
            try:
                timings = timed_round_robin(fns, protocol)
            except Exception:  # a run that fails: each cell alone, so only that one fails
                timings = [_alone(fn, protocol) for fn in fns]
            for p, times in zip(group, timings, strict=True):
                if times is None:
                    _failed(bar, p.job, RuntimeError("run() failed"))
                    continue
                try:
                    rows.append(finish(p, times, ctx, profile, precision, protocol,
                                       litert_threads, profile_runs, commit))  # fmt: skip
                except Exception as exc:  # a device error on one model (a validation error)
                    _failed(bar, p.job, exc)
        dataset.append_rows(out, rows)
        written += len(rows)
        bar.update(len(group))
        if rows:
            bar.set_postfix(ms=f"{rows[-1]['engine_median_ms']:.2f}", load=rows[-1]["load_avg"])
        group.clear()

    for job in jobs:
        config = job.config.key() if job.config else "{}"
        if (job.key_hash, config, precision) in done:
            bar.update(1)
            continue
        done.add((job.key_hash, config, precision))
        try:
            group.append(prepare(job, ctx, profile, precision))
        except ModelError as exc:  # e.g. an op without GPU kernel: no dispatch list
            bar.write(f"skipped {job.model or job.key_hash}: {exc}")
            bar.update(1)
            continue
        except Exception as exc:
            _failed(bar, job, exc)
            bar.update(1)
            continue
        if len(group) >= flush_every:
            measure_group()
    if group:
        measure_group()
    bar.close()
    return written


@contextmanager
def exclusive(path: str | os.PathLike | None):
    """Hold an exclusive lock on `path` (created if missing) for the block; no lock: None."""
    if path is None:
        yield
        return
    import fcntl  # POSIX only: --lock is for a Linux GPU machine (scripts/device_bench.sh)

    with open(path, "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def parse_shard(spec: str | None) -> tuple[int, int] | None:
    """(I, K) of a --shard "I/K" (0 <= I < K): the jobs I, I+K, I+2K ...; None: every job."""
    if not spec:
        return None
    try:
        i, k = (int(x) for x in spec.split("/"))
    except ValueError:
        raise ValueError(f"--shard {spec}: expected I/K, e.g. 0/4") from None
    if not 0 <= i < k:
        raise ValueError(f"--shard {spec}: I must be in 0..K-1")
    return i, k


def shard(jobs: list, spec: tuple[int, int] | None) -> list:
    """The jobs of shard (I, K) (parse_shard): I, I+K, I+2K ...; None: every job."""
    return jobs if spec is None else jobs[spec[0] :: spec[1]]


def _alone(fn, protocol: Protocol) -> list[float] | None:
    try:
        return timed_round_robin([fn], protocol)[0]
    except Exception:
        return None


def _failed(bar, job: Job, exc: Exception) -> None:
    first = str(exc).strip().splitlines()[-1] if str(exc).strip() else ""
    bar.write(f"failed {job.model or job.key_hash}: {type(exc).__name__}: {first}")


def existing_keys(path: str | os.PathLike) -> set:
    if not Path(path).exists():
        return set()
    return {dataset.row_key(r) for r in dataset.read_rows(path)}
