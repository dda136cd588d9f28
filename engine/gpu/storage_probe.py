"""storage="auto": buffers or textures for intermediates, measured per adapter and precision.

Adapters differ: on lavapipe fp16 storage-buffer reads are slow and textureLoad is
1.6-1.8x faster in depthwise layers, while in fp32 what texture reads save is about
what textureStore costs. So the engine measures instead of guessing:

- the probe: an inverted-residual block (1x1 conv -> 3x3 depthwise -> 1x1 conv,
  PROBE_HWC, RELU6), the layer mix of the MediaPipe models, compiled twice with its
  two intermediates in buffers and in textures (graph input and output are buffers
  in both); the two variants run alternately, ROUNDS rounds of REPEATS block runs
  each after one warm-up round, timed with GPU timestamps when the adapter has them
  (else wall clock around submit + wait); the median of the per-round time ratios
  counts (a round's two variants share the machine's load);
- the choice: "texture" when it is at least MARGIN faster, else "buffer" (buffers
  are the simpler kind: an arena is possible, no texture limits). Lavapipe: buffer
  for fp32, texture for fp16 (fp16 storage-buffer reads are slow there);
- cost: 0.07-0.13 s per precision on lavapipe with warm shader caches (0.4-2.5 s the
  very first time, compiling the probe's shaders), once per (adapter, precision) per
  process; the result is also kept in `<user cache dir of "webgpu-ar">/storage/
  <adapter>.json` (platformdirs, when installed), so later processes reuse it (key:
  vendor, device, driver description, backend; delete the file or pass refresh=True
  to re-measure);
- ENGINE_STORAGE=buffer|texture in the environment overrides the measurement.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path

import numpy as np

# 64x64x24: face detection's first blocks. On lavapipe (texture / buffer time, 4 probes
# each): fp32 1.03-1.03, fp16 0.91-0.95; whole models 1.04-1.05 and 0.91-0.98. Smaller
# probes or fewer rounds flipped with the load of other processes.
PROBE_HWC = (64, 64, 24)
ROUNDS = 10
REPEATS = 3
MARGIN = 0.03  # texture must be >= 3% faster
VERSION = 2  # bump when the probe changes: older results are ignored
APP_NAME = "webgpu-ar"

_choices: dict[tuple[str, str], dict] = {}


def default_dir() -> Path | None:
    try:
        import platformdirs
    except ImportError:
        return None
    return Path(platformdirs.user_cache_dir(APP_NAME)) / "storage"


def adapter_key(ctx) -> str:
    """vendor/device/driver/backend of the context's adapter ("" when unknown)."""
    info = ctx.info
    if not info:
        return ""
    fields = ("vendor", "device", "description", "backend_type")
    return json.dumps({k: str(info.get(k, "")) for k in fields}, sort_keys=True)


def choose_storage(
    ctx, precision: str, cache_dir: str | Path | None = None, refresh: bool = False
) -> str:
    """The storage kind, "buffer" or "texture", for intermediates on `ctx` at `precision`."""
    forced = os.environ.get("ENGINE_STORAGE", "").strip().lower()
    if forced in ("buffer", "texture"):
        return forced
    return probe_result(ctx, precision, cache_dir, refresh)["kind"]


def probe_result(
    ctx, precision: str, cache_dir: str | Path | None = None, refresh: bool = False
) -> dict:
    """{"kind", "buffer_ms", "texture_ms", "timer", "probe_ms"}: cached, else measured."""
    key = adapter_key(ctx)
    memo = (key or f"device-{id(ctx.device)}", precision)
    if not refresh and memo in _choices:
        return _choices[memo]
    path = None
    directory = Path(cache_dir) if cache_dir is not None else default_dir()
    if key and directory is not None:
        digest = hashlib.sha256(f"{key} v{VERSION}".encode()).hexdigest()[:16]
        path = directory / f"{digest}.json"
    stored = _load(path)
    if not refresh and isinstance(stored.get(precision), dict):
        entry = stored[precision]
        if entry.get("kind") in ("buffer", "texture"):
            _choices[memo] = entry
            return entry
    entry = measure(ctx, precision)
    _choices[memo] = entry
    if path is not None:
        stored.update({"version": VERSION, "adapter": key, precision: entry})
        _save(path, stored)
    return entry


def measure(ctx, precision: str) -> dict:
    """Time the probe block with buffer and with texture intermediates (see docstring)."""
    from engine.gpu.engine import Engine, _GpuSegment

    t0 = time.perf_counter()
    graph = probe_graph(*PROBE_HWC)
    engines = {
        kind: Engine(graph, context=ctx, precision=precision, storage=kind, transforms=False)
        for kind in ("buffer", "texture")
    }
    dispatches = {
        kind: [d for s in e.steps if isinstance(s, _GpuSegment) for d in s.dispatches]
        for kind, e in engines.items()
    }
    for e in engines.values():  # inputs once; the probe reruns the model from them
        e.run({"x": np.full(e.graph.tensors[0].shape, 0.5, np.float32)})
    timer = "gpu" if ctx.has_timestamps else "wall"
    times = _gpu_times(ctx, dispatches) if timer == "gpu" else _wall_times(ctx, dispatches)
    # Rounds run back to back, so a round's two variants share the machine's load: the
    # median of the per-round ratios resists other processes better than two minima.
    ratio = float(np.median(np.array(times["texture"]) / np.array(times["buffer"])))
    return {
        "kind": "texture" if ratio <= 1 - MARGIN else "buffer",
        "ratio": ratio,  # texture / buffer time
        "buffer_ms": float(np.median(times["buffer"])),
        "texture_ms": float(np.median(times["texture"])),
        "timer": timer,
        "probe_ms": (time.perf_counter() - t0) * 1e3,
    }


def probe_graph(h: int, w: int, c: int):
    """x -> 1x1 conv -> 3x3 depthwise -> 1x1 conv -> y, RELU6, fixed weights."""
    from engine.model.ir import Graph, Op, Tensor

    rng = np.random.default_rng(0)

    def const(name, shape):
        return Tensor(name, shape, "float32", (rng.standard_normal(shape) * 0.1).astype("f4"))

    tensors = [
        Tensor("x", (1, h, w, c), "float32"),
        const("w1", (c, 1, 1, c)),
        const("b1", (c,)),
        Tensor("t1", (1, h, w, c), "float32"),
        const("wd", (1, 3, 3, c)),
        const("bd", (c,)),
        Tensor("t2", (1, h, w, c), "float32"),
        const("w2", (c, 1, 1, c)),
        const("b2", (c,)),
        Tensor("y", (1, h, w, c), "float32"),
    ]
    conv = {"padding": "SAME", "stride_h": 1, "stride_w": 1, "fused_activation_function": "RELU6"}
    dw = {**conv, "depth_multiplier": 1}
    ops = [
        Op("CONV_2D", (0, 1, 2), (3,), dict(conv)),
        Op("DEPTHWISE_CONV_2D", (3, 4, 5), (6,), dw),
        Op("CONV_2D", (6, 7, 8), (9,), dict(conv)),
    ]
    return Graph(tensors, ops, [0], [9], name="storage_probe")


def _record(pass_, dispatches, repeats: int) -> None:
    for _ in range(repeats):
        for d in dispatches:
            pass_.set_pipeline(d.pipeline)
            pass_.set_bind_group(0, d.group)
            pass_.dispatch_workgroups(*d.grid)


def _gpu_times(ctx, dispatches: dict) -> dict[str, list[float]]:
    import wgpu

    dev = ctx.device
    kinds = list(dispatches)
    order = [k for _ in range(ROUNDS + 1) for k in kinds]  # round 0: warm-up
    queries = dev.create_query_set(type="timestamp", count=2 * len(order))
    resolved = dev.create_buffer(
        size=16 * len(order), usage=wgpu.BufferUsage.QUERY_RESOLVE | wgpu.BufferUsage.COPY_SRC
    )
    encoder = dev.create_command_encoder()
    for i, kind in enumerate(order):
        writes = {"query_set": queries, "beginning_of_pass_write_index": 2 * i,
                  "end_of_pass_write_index": 2 * i + 1}  # fmt: skip
        pass_ = encoder.begin_compute_pass(timestamp_writes=writes)
        _record(pass_, dispatches[kind], REPEATS)
        pass_.end()
    encoder.resolve_query_set(queries, 0, 2 * len(order), resolved, 0)
    dev.queue.submit([encoder.finish()])
    ticks = np.frombuffer(dev.queue.read_buffer(resolved), np.uint64).reshape(-1, 2)
    ms = (ticks[:, 1].astype(np.float64) - ticks[:, 0]) / 1e6 / REPEATS
    out: dict[str, list[float]] = {k: [] for k in kinds}
    for i, kind in enumerate(order):
        if i >= len(kinds):
            out[kind].append(float(ms[i]))
    return out


def _wall_times(ctx, dispatches: dict) -> dict[str, list[float]]:
    import wgpu

    dev = ctx.device
    fence = dev.create_buffer(size=16, usage=wgpu.BufferUsage.MAP_READ | wgpu.BufferUsage.COPY_DST)
    scratch = dev.create_buffer(size=16, usage=wgpu.BufferUsage.COPY_SRC)
    out: dict[str, list[float]] = {k: [] for k in dispatches}
    for r in range(ROUNDS + 1):
        for kind, ds in dispatches.items():
            t0 = time.perf_counter()
            encoder = dev.create_command_encoder()
            pass_ = encoder.begin_compute_pass()
            _record(pass_, ds, REPEATS)
            pass_.end()
            encoder.copy_buffer_to_buffer(scratch, 0, fence, 0, 16)
            dev.queue.submit([encoder.finish()])
            fence.map_sync(wgpu.MapMode.READ)
            fence.unmap()
            if r:
                out[kind].append((time.perf_counter() - t0) * 1e3 / REPEATS)
    return out


def _load(path: Path | None) -> dict:
    if path is None or not path.exists():
        return {}
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) and data.get("version") == VERSION else {}


def _save(path: Path, data: dict) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(data, indent=1, sort_keys=True))
        tmp.replace(path)
    except OSError:
        pass  # a read-only cache directory: measure again next time
