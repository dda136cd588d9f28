"""Warm-up: run each of an engine's pipelines once, one submit at a time, reporting k/n.

- input: a compiled Engine (its prepared dispatches and bind groups); optionally a scratch
  context on the same adapter (`scratch_context`) to compile on
- output: nothing the caller reads (the tensors hold garbage until the next real run);
  `Progress(model, "shaders", k, n)` after each pipeline, then "ready" (progress.py)
- why: lavapipe compiles a compute shader at its first dispatch, inside the queue's
  thread, so a cold first frame is one long silent submit (27 s for selfie_segmentation's
  56 pipelines with an empty Mesa cache, 2 loaded cores); a submit per pipeline costs the
  same compile time but can say how far it got. On GPUs that compile at pipeline
  creation it is one cheap run.
- scratch: while that queue also presents frames (a planner switch under a live window),
  each compile stalls the display behind it (frames p50 0.9 s, max 4 s, measured with the
  cache off). Compiling on a second device of the same adapter leaves the display's queue
  alone; Mesa keeps what it compiled in its disk cache, so the engine's own first
  dispatches then load it (selfie_segmentation: 47 s on the scratch device, 0.17 s after
  on the display's, empty cache, load 8). Worth it only where such a cache exists
  (`compiles_late_with_cache`); it costs a second set of pipelines and tensors, freed after.
- usage: `with report_to(callback): warm_up(engine)` (or `scratch=scratch_context(ctx)`)
"""

from __future__ import annotations

import os
import threading

from engine.gpu.progress import report
from engine.gpu.recorder import record
from engine.gpu.resources import Resources
from engine.gpu.runtime import RunStats
from engine.gpu.sync import Fence

_scratch: dict[int, object] = {}  # id(device) -> its scratch GpuContext
_scratch_lock = threading.Lock()  # staged builds ask for one from worker threads


def warm_up(engine, sync: str = "sleep", scratch=None) -> int:
    """Dispatch the first use of every distinct pipeline of `engine` (the encode() path),
    each in a submit of its own, waiting for each; with `scratch` (a GpuContext on the same
    adapter) compile there first. Returns how many pipelines ran."""
    name = engine.graph.name
    if scratch is None:
        n = _run_firsts(engine.resources, name, sync, progress=True)
    else:
        precompile(engine.program, scratch, sync, progress=True)
        n = _run_firsts(engine.resources, name, sync, progress=False)  # from the disk cache
    report(name, "ready", n, n)
    return n


def precompile(program, scratch, sync: str = "sleep", progress: bool = False) -> int:
    """Dispatch each of `program`'s pipelines once on `scratch` (a second device of the
    adapter) with tensors of their own, then free those: on lavapipe Mesa's disk cache then
    holds every shader for the first dispatches on the caller's device. Returns how many."""
    shadow = Resources(program, scratch)
    try:
        return _run_firsts(shadow, program.graph.name, sync, progress=progress)
    finally:
        _release(shadow)


def _run_firsts(res: Resources, name: str, sync: str, progress: bool) -> int:
    firsts, seen = [], set()
    for segment in res.segments:
        for d in segment.dispatches:
            if id(d.pipeline) not in seen:
                seen.add(id(d.pipeline))
                firsts.append(d)
    device, n = res.device, len(firsts)
    fence = Fence(device)
    if progress:
        report(name, "shaders", 0, n)
    for k, d in enumerate(firsts, 1):
        encoder = device.create_command_encoder()
        pass_ = encoder.begin_compute_pass()
        record(pass_, [d], RunStats())
        pass_.end()
        fence.signal(encoder)
        device.queue.submit([encoder.finish()])
        fence.wait(sync)
        if progress:
            report(name, "shaders", k, n)
    fence.src.destroy()
    fence.dst.destroy()
    return n


def _release(res: Resources) -> None:
    """Free a scratch Resources' tensors and its share of the scratch device's weights."""
    res.release()
    seen: set[int] = set()
    for view in list(res.buffers.values()) + list(res.textures.values()):
        obj = getattr(view, "buffer", None) or getattr(view, "texture", None)
        if obj is not None and id(obj) not in seen:
            seen.add(id(obj))
            obj.destroy()


def compiles_late_with_cache(ctx) -> bool:
    """True for Mesa's lavapipe (llvmpipe) with its disk shader cache on: shaders compile
    at first dispatch and what one device compiled, another finds."""
    info = ctx.info
    text = f"{info.get('device', '')} {info.get('description', '')}".lower()
    off = os.environ.get("MESA_SHADER_CACHE_DISABLE", "").lower() in ("1", "true", "yes")
    return ("llvmpipe" in text or "lavapipe" in text) and not off


def scratch_context(ctx):
    """A second device on `ctx`'s adapter (same features and limits), made once."""
    key = id(ctx.device)
    with _scratch_lock:
        return _scratch.get(key) or _make_scratch(ctx, key)


def _make_scratch(ctx, key: int):
    from engine.gpu.device import GpuContext

    device = ctx.adapter.request_device_sync(
        required_features=sorted(ctx.features), required_limits=dict(ctx.limits)
    )
    _scratch[key] = GpuContext.create(device=device)
    return _scratch[key]
