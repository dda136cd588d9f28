"""A Program's GPU objects, made once: tensor memory, pipelines, constant buffers, bind groups.

- tensor memory exactly as the plans say (storage.allocate / allocate_textures);
- pipelines: one per distinct WGSL source, compiled on several threads and shared with
  every other engine on the device (ctx.pipelines);
- constant buffers (packed weights) from the device's weights cache (weights.py):
  shared with every other engine that has the same constants;
- per GPU step, each dispatch `Prepared`: pipeline, bind group (tensors and packed
  weights), work group count; CPU steps stay as they are.

    res = Resources(program, ctx)
    res.steps        # [Segment(dispatches=[Prepared, ...]) | CpuStep, ...]
    res.view(t)      # where tensor t lives: a buffer View or a TextureView
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from engine.config import settings
from engine.errors import DeviceError
from engine.gpu.compile import CpuStep, Program
from engine.gpu.device import GpuContext, create_compute_pipeline
from engine.gpu.kernels.base import Binding, Dispatch
from engine.gpu.progress import report
from engine.gpu.recorder import native_handles
from engine.gpu.storage import TextureView, View, allocate, allocate_textures
from engine.gpu.weights import constant_bytes
from engine.precision import Precision
from engine.precision import precision as precision_of


@dataclass(frozen=True)
class Prepared:
    """A dispatch ready to record: pipeline, bind group, work group count (and their
    native handles, for recorder.py's direct calls)."""

    pipeline: object
    group: object
    grid: tuple[int, int, int]
    op_index: int = -1  # -1: a graph input/output conversion
    kernel: str = ""
    native: tuple | None = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "native", native_handles(self.pipeline, self.group))


@dataclass
class Segment:
    """Consecutive GPU steps: recorded into one compute pass (split only where the
    adapter class's submit plan submits early: engine/gpu/submits.py)."""

    dispatches: list[Prepared] = field(default_factory=list)


class Resources:
    def __init__(self, program: Program, ctx: GpuContext):
        self.program, self.ctx, self.device = program, ctx, ctx.device
        self.precision = precision_of(program.options.precision)
        self.clock = {"shaders_and_pipelines": 0.0, "weight_upload": 0.0}
        # compiled here / found compiled by an earlier engine on this device
        self.pipeline_stats = {"compiled": 0, "reused": 0}
        self.pipelines: dict[str, object] = {}
        self._weights: list = []  # constant buffers acquired from ctx.weights
        t0 = time.perf_counter()
        g, plans = program.graph, program.plans
        elem = self.precision.element_bytes
        self.buffers = allocate(self.device, g, plans.buffers, elem, program.textures)
        self.textures: dict[int, TextureView] = {}
        if plans.textures is not None:
            self.textures = allocate_textures(self.device, g, plans.textures, self.precision)
        self.compile_pipelines(
            [(d.source, d.kernel) for d in program.dispatches], report_as="pipelines"
        )
        self.steps: list[Segment | CpuStep] = []
        for step in program.steps:
            if isinstance(step, CpuStep):
                self.steps.append(step)
                continue
            if not self.steps or not isinstance(self.steps[-1], Segment):
                self.steps.append(Segment())
            for d in step.dispatches:
                self.steps[-1].dispatches.append(self.prepare(d, step.op_index))
        self.clock["bind_groups_and_buffers"] = (
            time.perf_counter()
            - t0
            - self.clock["shaders_and_pipelines"]
            - self.clock["weight_upload"]
        )

    @property
    def segments(self) -> list[Segment]:
        return [s for s in self.steps if isinstance(s, Segment)]

    def view(self, tensor: int) -> View | TextureView:
        return self.textures[tensor] if tensor in self.textures else self.buffers[tensor]

    # --- pipelines ---------------------------------------------------------------------
    def compile_pipelines(self, items: list[tuple[str, str]], report_as: str | None = None) -> None:
        """Create the pipelines of distinct (source, label)s not made yet, on several
        threads (wgpu-py releases the GIL in its native calls; lavapipe compiles each
        pipeline on the calling thread: 2 threads 1.8x faster on 2 cores). Pipelines
        another engine on this device already made are reused (ctx.pipelines). With
        `report_as`, each one made is reported as that phase's k of n (progress.py)."""
        t0 = time.perf_counter()
        shared, todo = self.ctx.pipelines, {}
        for source, label in items:
            if source in self.pipelines:
                continue
            if source in shared:
                self.pipelines[source] = shared[source]
                self.pipeline_stats["reused"] += 1
            else:
                todo.setdefault(source, label)
        name, total = self.program.graph.name, len(todo)

        def done(k: int) -> None:  # the program's batch only: progress.py's k of n
            if report_as:
                report(name, report_as, k, total)

        made = _compile_all(self.device, list(todo.items()), done)
        for source, pipeline in zip(todo, made, strict=True):
            if isinstance(pipeline, DeviceError):
                raise pipeline
            self.pipelines[source] = shared[source] = pipeline
            self.pipeline_stats["compiled"] += 1
        self.clock["shaders_and_pipelines"] += time.perf_counter() - t0

    def pipeline(self, source: str, label: str):
        if source not in self.pipelines:
            self.compile_pipelines([(source, label)])
        return self.pipelines[source]

    # --- dispatches --------------------------------------------------------------------
    def prepare(self, d: Dispatch, op_index: int = -1) -> Prepared:
        pipeline = self.pipeline(d.source, d.kernel)
        views = []
        for b in d.bindings:
            if b.role == "const":
                buf = self.const_buffer(b)
                views.append(View(buf, 0, buf.size))
            else:
                views.append(self.view(b.tensor))
        return Prepared(
            pipeline, self.bind_group(pipeline, views), d.workgroups, op_index, d.kernel
        )

    def prepare_raw(self, source: str, label: str, views: list, grid) -> Prepared:
        """A dispatch over given views (graph I/O conversions)."""
        pipeline = self.pipeline(source, label)
        return Prepared(pipeline, self.bind_group(pipeline, views), grid, -1, label)

    def const_buffer(self, b: Binding):
        """The device-wide cached buffer of `b`'s constants (engine/gpu/weights.py)."""
        t0 = time.perf_counter()
        buf = self.ctx.weights.acquire(b, self.precision)
        self._weights.append(buf)
        self.clock["weight_upload"] += time.perf_counter() - t0
        return buf

    def release(self) -> None:
        """Give back the shared constant buffers (the engine is closed)."""
        weights, self._weights = self._weights, []
        for buf in weights:
            self.ctx.weights.release(buf)

    def bind_group(self, pipeline, views: list[View | TextureView]):
        entries = [{"binding": i, "resource": resource(v)} for i, v in enumerate(views)]
        layout = pipeline.get_bind_group_layout(0)
        return self.device.create_bind_group(layout=layout, entries=entries)


def constant_buffer(device, b: Binding, precision: Precision):
    """A buffer of its own (not shared) for a const binding, uniform or storage as it says."""
    import wgpu

    usage = wgpu.BufferUsage.UNIFORM if b.space == "uniform" else wgpu.BufferUsage.STORAGE
    return device.create_buffer_with_data(data=constant_bytes(b, precision), usage=usage)


def resource(v: View | TextureView):
    """A bind group resource: a texture view, or a buffer range."""
    if isinstance(v, TextureView):
        return v.view
    return {"buffer": v.buffer, "offset": v.offset, "size": v.size}


def compile_threads() -> int:
    """Threads that compile pipelines: ENGINE_COMPILE_THREADS, else the usable CPUs (<= 8)."""
    if settings().compile_threads:
        return settings().compile_threads
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cpus = 1
    return max(1, min(cpus, 8))


def _compile_all(device, items: list[tuple[str, str]], done: Callable[[int], None]) -> list:
    """A pipeline (or the DeviceError of its shader) per (source, label); done(k) after
    the k-th (in order: pool.map yields each result once it and those before it are made)."""

    def one(item: tuple[str, str]):
        try:
            return create_compute_pipeline(device, *item)
        except DeviceError as exc:
            return exc

    if not items:
        return []
    done(0)
    workers = min(len(items), compile_threads())
    out = []
    if workers > 1:
        with ThreadPoolExecutor(workers) as pool:
            for made in pool.map(one, items):
                out.append(made)
                done(len(out))
        return out
    for item in items:
        out.append(one(item))
        done(len(out))
    return out
