"""storage="tune": buffers or textures for intermediates, measured on this device (opt-in).

The default ("auto") is a fixed rule over adapter facts (engine/gpu/storage_choice.py);
this measurement is for users who ask for it, and its answer is cached:

- the probe: an inverted-residual block (1x1 conv -> 3x3 depthwise -> 1x1 conv,
  PROBE_HWC, RELU6), the layer mix of the MediaPipe models, compiled twice with its
  two intermediates in buffers and in textures (graph input and output are buffers
  in both); the two variants run alternately, ROUNDS rounds of REPEATS block runs
  each after one warm-up round, timed with GPU timestamps when the adapter has them
  (else wall clock around submit + wait); the median of the per-round time ratios
  counts (a round's two variants share the machine's load);
- the choice: "texture" when it is at least MARGIN faster, else "buffer" (buffers
  are the simpler kind: an arena is possible, no texture limits);
- cost: 0.07-0.13 s per precision on lavapipe with warm shader caches (0.4-2.5 s the
  very first time, compiling the probe's shaders), once per (adapter, precision) per
  process; the result is kept in the per-adapter cache (engine/gpu/adapter_cache.py,
  kind "storage"), so later processes reuse it (delete the file or pass refresh=True).
"""

from __future__ import annotations

import time

import numpy as np

from engine.gpu.adapter_cache import AdapterFile, AdapterKey

# 64x64x24: face detection's first blocks. On lavapipe (texture / buffer time, 4 probes
# each): fp32 1.03-1.03, fp16 0.91-0.95; whole models 1.04-1.05 and 0.91-0.98. Smaller
# probes or fewer rounds flipped with the load of other processes.
PROBE_HWC = (64, 64, 24)
ROUNDS = 10
REPEATS = 3
MARGIN = 0.03  # texture must be >= 3% faster
VERSION = 2  # bump when the probe changes: older results are ignored
KIND = "storage"

_choices: dict[tuple[str, str], dict] = {}


def probe_result(ctx, precision: str, cache_dir=None, refresh: bool = False) -> dict:
    """{"kind", "ratio", "buffer_ms", "texture_ms", "timer", "probe_ms"}: cached, else
    measured. `cache_dir`: the folder of the storage files (default: the cache root's)."""
    key = AdapterKey.from_info(ctx.info)
    memo = (key.file_name() if ctx.info else f"device-{id(ctx.device)}", precision)
    if not refresh and memo in _choices:
        return _choices[memo]
    file = AdapterFile(KIND, key, VERSION, cache_dir) if ctx.info else None
    stored = file.load() if file is not None else {}
    entry = stored.get(precision)
    if refresh or not (isinstance(entry, dict) and entry.get("kind") in ("buffer", "texture")):
        entry = measure(ctx, precision)
        if file is not None:
            file.save({**stored, precision: entry})
    _choices[memo] = entry
    return entry


def measure(ctx, precision: str) -> dict:
    """Time the probe block with buffer and with texture intermediates (see docstring)."""
    from engine.gpu.compile import CompileOptions, Target, compile_graph
    from engine.gpu.resources import Resources

    t0 = time.perf_counter()
    graph = probe_graph(*PROBE_HWC)
    dispatches = {}
    for kind in ("buffer", "texture"):
        options = CompileOptions(precision=precision, storage=kind, transforms=False)
        res = Resources(compile_graph(graph, options, Target.of(ctx)), ctx)
        dispatches[kind] = [d for seg in res.segments for d in seg.dispatches]
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
    from engine.model.builder import GraphBuilder

    rng = np.random.default_rng(0)
    b = GraphBuilder("storage_probe")

    def const(name, shape):
        return b.const((rng.standard_normal(shape) * 0.1).astype("f4"), name)

    conv = {"padding": "SAME", "stride_h": 1, "stride_w": 1, "fused_activation_function": "RELU6"}
    x = b.tensor((1, h, w, c), name="x")
    t1 = b.op("CONV_2D", (x, const("w1", (c, 1, 1, c)), const("b1", (c,))), name="t1", **conv)
    t2 = b.op("DEPTHWISE_CONV_2D", (t1, const("wd", (1, 3, 3, c)), const("bd", (c,))), name="t2",
              depth_multiplier=1, **conv)  # fmt: skip
    y = b.op("CONV_2D", (t2, const("w2", (c, 1, 1, c)), const("b2", (c,))), name="y", **conv)
    return b.graph([x], [y])


def _record(pass_, dispatches, repeats: int) -> None:
    for _ in range(repeats):
        for d in dispatches:
            pass_.set_pipeline(d.pipeline)
            pass_.set_bind_group(0, d.group)
            pass_.dispatch_workgroups(*d.grid)


def _gpu_times(ctx, dispatches: dict) -> dict[str, list[float]]:
    from engine.gpu.timestamps import PassTimer

    kinds = list(dispatches)
    order = [k for _ in range(ROUNDS + 1) for k in kinds]  # round 0: warm-up
    timer = PassTimer(ctx.device, len(order))
    encoder = ctx.device.create_command_encoder()
    for i, kind in enumerate(order):
        pass_ = timer.begin_pass(encoder, i)
        _record(pass_, dispatches[kind], REPEATS)
        pass_.end()
    timer.resolve(encoder)
    ctx.device.queue.submit([encoder.finish()])
    ms = timer.ms() / REPEATS
    out: dict[str, list[float]] = {k: [] for k in kinds}
    for i, kind in enumerate(order[len(kinds) :], start=len(kinds)):
        out[kind].append(float(ms[i]))
    return out


def _wall_times(ctx, dispatches: dict) -> dict[str, list[float]]:
    from engine.gpu.sync import Fence

    fence = Fence(ctx.device)
    out: dict[str, list[float]] = {k: [] for k in dispatches}
    for r in range(ROUNDS + 1):
        for kind, ds in dispatches.items():
            t0 = time.perf_counter()
            encoder = ctx.device.create_command_encoder()
            pass_ = encoder.begin_compute_pass()
            _record(pass_, ds, REPEATS)
            pass_.end()
            fence.signal(encoder)
            ctx.device.queue.submit([encoder.finish()])
            fence.wait("sleep")
            if r:
                out[kind].append((time.perf_counter() - t0) * 1e3 / REPEATS)
    return out
