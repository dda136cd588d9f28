"""The GPU engine: compile a graph once, then run it with one submit.

Compile (at construction):
1. graph transforms (fuse, drop, merge) -> the graph that runs;
2. each op -> the first GPU kernel that accepts it, else the CPU fallback
   (the reference interpreter), splitting the program into segments;
3. tensor storage: PHWC4 buffers for inputs and outputs; intermediates in buffers
   or textures (`storage=`, engine/gpu/placement.py), each kind by its memory plan;
4. shader modules and pipelines (one per distinct WGSL source), constant
   buffers (packed weights) and bind groups, all created once.
Run: upload inputs (HWC -> PHWC4 on the GPU), every dispatch of a GPU segment
in one compute pass and one submit, download outputs (PHWC4 -> HWC on the GPU),
one wait (`sleep` blocks, `spin` polls without sleeping).

Work group sizes of the tunable kernels (conv2d, conv1x1, depthwise_tiled):
`workgroups="heuristic"` (default: rules over the problem and the device), "table"
(the kernels' fixed sizes) or "tune"
(timed on the device, remembered in a TuneCache); docs/workgroups.md.

Usage: Engine.from_tflite("models/face_landmark.tflite").run({"input_1": x})
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from engine.errors import DeviceError, ModelError
from engine.gpu.codegen import render
from engine.gpu.device import GpuContext, create_compute_pipeline, shared_context
from engine.gpu.kernels.base import (
    Binding,
    BuildContext,
    Dispatch,
    Shape4,
    ceil_div,
    select,
    shape4,
)
from engine.gpu.placement import TextureLimits, op_storage, place
from engine.gpu.storage import (
    TextureView,
    View,
    allocate,
    allocate_textures,
    fill_texture,
    plan_storage,
    read_texels,
    write_texels,
)
from engine.memory import ArenaPlan
from engine.model.importer import load_tflite
from engine.model.ir import Graph, tensors_read
from engine.model.layout import phwc4_shape, slices
from engine.reference import registry as reference_kernels
from engine.reference.fused import has_extras, run_with_extras

SYNC_MODES = ("sleep", "spin")
STORAGE_KINDS = ("buffer", "texture", "auto")
WORKGROUP_POLICIES = ("table", "heuristic", "tune")
# Default work group policy: rules I-V, no timing (docs/workgroups.md, "Measured": on
# lavapipe as fast as or faster than the kernels' fixed sizes, "table", on the core models).
DEFAULT_WORKGROUPS = "heuristic"
CACHE_DIR_ENV = "ENGINE_CACHE_DIR"  # overrides the tuning cache's user cache directory


@dataclass
class RunStats:
    """Figures of the last run()."""

    dispatches: int = 0
    submits: int = 0
    uploads: int = 0
    readbacks: int = 0
    encode_ms: float = 0.0
    wait_ms: float = 0.0
    wait_cpu_ms: float = 0.0  # CPU time the waiting thread burned (spin >> sleep)
    total_ms: float = 0.0


@dataclass(frozen=True)
class TensorLayout:
    """A graph input/output on the GPU: element (b, y, x, c) of the PHWC4 shape is vec4
    ((c // 4) * B*H*W + (b*H + y) * W + x), lane c % 4, from `offset` in `buffer`."""

    name: str
    shape: tuple[int, ...]  # as the model declares it
    phwc4: tuple[int, int, int, int]  # (B, H, W, C) it is stored as
    slices: int
    precision: str  # element type: fp32 -> f32, fp16 -> f16
    buffer: object
    offset: int
    size: int


@dataclass(frozen=True)
class DispatchTime:
    op_index: int  # -1 for the input/output conversions
    op_type: str
    kernel: str
    gpu_ms: float


@dataclass
class _CpuStep:
    op_index: int


@dataclass(frozen=True)
class _Prepared:
    """A dispatch ready to record: pipeline, bind group, work group count."""

    pipeline: object
    group: object
    grid: tuple[int, int, int]
    op_index: int = -1  # -1: upload/download conversion
    kernel: str = ""


@dataclass
class _GpuSegment:
    dispatches: list[_Prepared] = field(default_factory=list)


class Engine:
    """A compiled model on one WebGPU device."""

    def __init__(
        self,
        graph: Graph,
        *,
        context: GpuContext | None = None,
        adapter: str | None = None,
        precision: str = "fp32",
        sync: str = "sleep",
        planner: str | None = None,
        transforms: bool = True,
        storage: str = "auto",
        texture_planner: str | None = None,
        workgroups: str = DEFAULT_WORKGROUPS,
        tune_method: str = "descent",
        cache_dir: str | os.PathLike | None = None,
    ):
        if workgroups not in WORKGROUP_POLICIES:
            raise ValueError(f"workgroups must be one of {WORKGROUP_POLICIES}, not {workgroups!r}")
        if tune_method not in ("descent", "exhaustive"):
            raise ValueError(f"tune_method must be descent or exhaustive, not {tune_method!r}")
        if precision not in ("fp32", "fp16"):
            raise ValueError(f"precision must be fp32 or fp16, not {precision!r}")
        if storage not in STORAGE_KINDS:
            raise ValueError(f"storage must be one of {STORAGE_KINDS}, not {storage!r}")
        if sync not in SYNC_MODES:
            raise ValueError(f"sync must be one of {SYNC_MODES}, not {sync!r}")
        self.ctx = context or shared_context(adapter)
        if precision == "fp16" and not self.ctx.has_f16:
            raise DeviceError(f"{self.ctx.name} lacks shader-f16; use precision='fp32'")
        self.precision, self.sync, self.planner = precision, sync, planner
        self.texture_planner = texture_planner
        self.source_graph = graph
        t0 = time.perf_counter()
        # Where intermediates live: "buffer" or "texture" (auto: measured once per
        # adapter and precision, engine/gpu/storage_probe.py); inputs/outputs: buffers.
        self.storage_requested = storage
        if storage == "auto":
            from engine.gpu.storage_probe import choose_storage

            storage = choose_storage(self.ctx, precision)
        self.storage = storage
        self._init_clock_storage = time.perf_counter() - t0
        t0 = time.perf_counter()
        self.graph = _apply_transforms(graph) if transforms else graph
        self._init_clock = {
            "storage_choice": self._init_clock_storage,
            "transforms": time.perf_counter() - t0,
            "kernel_codegen": 0.0,
            "planning": 0.0,
            "shaders_and_pipelines": 0.0,
            "weight_upload": 0.0,
            "bind_groups_and_buffers": 0.0,
            "workgroup_tuning": 0.0,
        }
        self.workgroups = workgroups
        # Work group selection: per tunable layer (kernel, signature, table, choice, make);
        # tune_stats: distinct signatures, candidates timed (0 on a warm cache), ms spent.
        self.workgroup_choices: list = []
        self.tune_stats = {"timed": 0, "tune_ms": 0.0}
        from engine.gpu.kernels.tiles import adapter_class
        from engine.gpu.workgroups import AdapterKey, DeviceLimits, TuneCache

        cache = None
        if workgroups == "tune":
            directory = cache_dir if cache_dir is not None else os.environ.get(CACHE_DIR_ENV)
            if directory:
                directory = Path(directory) / "workgroups"
            cache = TuneCache(AdapterKey.from_info(self.ctx.info), directory)
        self.tune_cache = cache
        self.build_ctx = BuildContext(
            precision=precision,
            max_uniform_bytes=self.ctx.limit("max-uniform-buffer-binding-size", 65536),
            workgroups=workgroups,
            limits=DeviceLimits.from_wgpu(self.ctx.limits, self.ctx.info),
            adapter=adapter_class(self.ctx.info),
            tune_cache=cache,
            tune_timer=self.time_dispatch if workgroups == "tune" else None,
            tune_method=tune_method,
            choices=self.workgroup_choices,
        )
        self.stats = RunStats()
        self.init_ms: dict[str, float] = {}
        self._elem_bytes = 2 if precision == "fp16" else 4
        self._compile()

    @classmethod
    def from_tflite(cls, path: str | os.PathLike, **kwargs) -> Engine:
        return cls(load_tflite(Path(path)), **kwargs)

    # --- compile ---------------------------------------------------------------------
    def _compile(self) -> None:
        g = self.graph
        t0 = time.perf_counter()
        kernels = [select(op, g) for op in g.ops]
        limits = TextureLimits(
            self.ctx.limit("max-texture-dimension-2d", 8192),
            self.ctx.limit("max-texture-array-layers", 256),
        )
        caps = [op_storage(k, op, g) for k, op in zip(kernels, g.ops, strict=True)]
        self.placement = place(g, caps, self.storage, limits)
        self.build_ctx = replace(self.build_ctx, textures=self.placement.textures)
        plan: list[tuple[int, list[Dispatch]] | _CpuStep] = []
        self.fallback_ops: list[str] = []
        for i, (op, kernel) in enumerate(zip(g.ops, kernels, strict=True)):
            if kernel is None:
                if reference_kernels.kernel(op.type) is None:
                    raise ModelError(
                        f"{g.name}: op #{i} {op.type} has neither a GPU nor a CPU kernel"
                    )
                self.fallback_ops.append(f"#{i} {op.type}")
                plan.append(_CpuStep(i))
                continue
            try:
                plan.append((i, kernel.build(op, g, self.build_ctx)))
            except (ValueError, KeyError) as exc:
                raise ModelError(f"{g.name}: op #{i} {op.type}: {exc}") from None
        t1 = time.perf_counter()
        alignment = self.ctx.limit("min-storage-buffer-offset-alignment", 256)
        textures = self.placement.textures
        plans = plan_storage(
            g, textures, self.planner, self.texture_planner, self._elem_bytes, alignment
        )
        # memory: the whole plan's figures; buffer_memory / texture_memory: each kind's
        # own plan (texture_memory None when no tensor is a texture).
        self.memory, self.buffer_memory = plans.memory, plans.buffers
        self.texture_memory = plans.textures
        self._arena = isinstance(self.buffer_memory.plan, ArenaPlan)
        t_plan = time.perf_counter()
        dev = self.ctx.device
        self._buffers = allocate(dev, g, self.buffer_memory, self._elem_bytes, textures)
        self._textures: dict[int, TextureView] = {}
        if self.texture_memory is not None:
            self._textures = allocate_textures(dev, g, self.texture_memory, self.precision)
        self._pipelines: dict[str, object] = {}
        # compiled here / found compiled by an earlier engine on this device
        self.pipeline_stats = {"compiled": 0, "reused": 0}
        self.steps: list[_GpuSegment | _CpuStep] = []
        self._compile_pipelines(
            [(self._for_storage(d.source), d.kernel) for item in plan
             if not isinstance(item, _CpuStep) for d in item[1]]
        )  # fmt: skip
        for item in plan:
            if isinstance(item, _CpuStep):
                self.steps.append(item)
                continue
            if not self.steps or not isinstance(self.steps[-1], _GpuSegment):
                self.steps.append(_GpuSegment())
            for d in item[1]:
                self.steps[-1].dispatches.append(self._prepare(d, op_index=item[0]))
        self._io = self._prepare_io()
        t2 = time.perf_counter()
        clock = self._init_clock
        clock["workgroup_tuning"] = self.tune_stats["tune_ms"] / 1e3
        clock["kernel_codegen"] = t1 - t0 - clock["workgroup_tuning"]
        clock["planning"] = t_plan - t1
        clock["bind_groups_and_buffers"] = (
            t2 - t_plan - clock["shaders_and_pipelines"] - clock["weight_upload"]
        )
        self.init_ms = {k: v * 1e3 for k, v in clock.items()}
        self.dispatch_count = sum(
            len(s.dispatches) for s in self.steps if isinstance(s, _GpuSegment)
        )
        self._debug_report()

    def _debug_report(self) -> None:
        """ENGINE_DEBUG=1: dispatches, fallbacks, plan; 3: the WGSL of every pipeline."""
        level = int(os.environ.get("ENGINE_DEBUG", "0") or 0)
        if level < 1:
            return
        m = self.memory
        print(f"[engine] storage: {self.storage} (asked {self.storage_requested}); "
              f"{len(self.placement.textures)} texture tensors, {len(self._buffers)} buffers")  # fmt: skip
        print(f"[engine] {self.graph.name}: {len(self.source_graph.ops)} ops imported, "
              f"{len(self.graph.ops)} after transforms, {self.dispatch_count} dispatches, "
              f"{len(self._pipelines)} pipelines, CPU fallback: {self.fallback_ops or 'none'}")  # fmt: skip
        print(f"[engine] memory: {m.strategy} {m.total_bytes:,} B (naive {m.naive_bytes:,}, "
              f"lower bound {m.lower_bound:,}, {m.objects} objects)")  # fmt: skip
        print(f"[engine] init ms: {', '.join(f'{k} {v:.1f}' for k, v in self.init_ms.items())}")
        if level >= 3:
            for source in self._pipelines:
                print(f"[engine] --- WGSL ---\n{source}")

    def _compile_pipelines(self, items: list[tuple[str, str]]) -> None:
        """Create the pipelines of distinct (source, label)s not made yet, on several
        threads (wgpu-py releases the GIL in its native calls; lavapipe compiles each
        pipeline on the calling thread: 2 threads 1.8x faster on 2 cores). Pipelines
        another engine on this device already made are reused (ctx.pipelines)."""
        t0 = time.perf_counter()
        shared = self.ctx.pipelines
        todo = {}
        for source, label in items:
            if source in self._pipelines:
                continue
            if source in shared:
                self._pipelines[source] = shared[source]
                self.pipeline_stats["reused"] += 1
            else:
                todo.setdefault(source, label)
        if not todo:
            self._init_clock["shaders_and_pipelines"] += time.perf_counter() - t0
            return
        dev = self.ctx.device

        def one(item: tuple[str, str]):
            try:
                return create_compute_pipeline(dev, *item)
            except DeviceError as exc:
                return exc

        workers = min(len(todo), compile_threads())
        if workers > 1:
            from concurrent.futures import ThreadPoolExecutor

            with ThreadPoolExecutor(workers) as pool:
                made = list(pool.map(one, todo.items()))
        else:
            made = [one(item) for item in todo.items()]
        for source, pipeline in zip(todo, made, strict=True):
            if isinstance(pipeline, DeviceError):
                raise pipeline
            self._pipelines[source] = shared[source] = pipeline
            self.pipeline_stats["compiled"] += 1
        self._init_clock["shaders_and_pipelines"] += time.perf_counter() - t0

    def _for_storage(self, source: str) -> str:
        """With an arena, tensors are ranges of one buffer: a WebGPU usage scope forbids
        binding a buffer read-only and read-write at once, but allows several read-write."""
        if self._arena:
            return source.replace("var<storage, read>", "var<storage, read_write>")
        return source

    def _pipeline(self, source: str, label: str):
        if source not in self._pipelines:
            self._compile_pipelines([(source, label)])
        return self._pipelines[source]

    def _const_buffer(self, b: Binding):
        import wgpu

        half = self.precision == "fp16" and b.dtype != "f32"
        data = np.ascontiguousarray(b.data, dtype=np.float16 if half else np.float32)
        usage = wgpu.BufferUsage.UNIFORM if b.space == "uniform" else wgpu.BufferUsage.STORAGE
        padded = np.zeros(max(16, ceil_div(data.nbytes, 16) * 16) // data.itemsize, data.dtype)
        padded[: data.size] = data.reshape(-1)
        t0 = time.perf_counter()
        buf = self.ctx.device.create_buffer_with_data(data=padded, usage=usage)
        self._init_clock["weight_upload"] += time.perf_counter() - t0
        return buf

    def _prepare(self, d: Dispatch, op_index: int) -> _Prepared:
        source = self._for_storage(d.source)
        pipeline = self._pipeline(source, d.kernel)
        views = []
        for b in d.bindings:
            if b.role == "const":
                buf = self._const_buffer(b)
                views.append(View(buf, 0, buf.size))
            elif b.tensor in self._textures:
                views.append(self._textures[b.tensor])
            else:
                views.append(self._buffers[b.tensor])
        return _Prepared(
            pipeline, self._bind_group(pipeline, views), d.workgroups, op_index, d.kernel
        )

    def _bind_group(self, pipeline, views: list[View | TextureView]):
        entries = [{"binding": i, "resource": _resource(v)} for i, v in enumerate(views)]
        layout = pipeline.get_bind_group_layout(0)
        return self.ctx.device.create_bind_group(layout=layout, entries=entries)

    def _prepare_io(self) -> dict:
        """Raw (HWC float32) staging buffers and the conversion dispatches for graph I/O."""
        import wgpu

        dev, g = self.ctx.device, self.graph
        io = {"in": {}, "out": {}}
        for t in g.inputs:
            s4 = shape4(g, t)
            raw = dev.create_buffer(
                size=max(16, s4.rows * s4.w * s4.c * 4),
                usage=wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_DST,
            )
            d = self._convert_dispatch(
                "hwc_to_phwc4.wgsl", s4, raw, self._buffers[t], s4.vec4_count
            )
            io["in"][t] = (raw, d)
        for t in g.outputs:
            s4 = shape4(g, t)
            nbytes = max(16, s4.rows * s4.w * s4.c * 4)
            raw = dev.create_buffer(
                size=nbytes, usage=wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_SRC
            )
            read = dev.create_buffer(
                size=nbytes, usage=wgpu.BufferUsage.MAP_READ | wgpu.BufferUsage.COPY_DST
            )
            d = self._convert_dispatch(
                "phwc4_to_hwc.wgsl", s4, self._buffers[t], raw, s4.rows * s4.w * s4.c
            )
            io["out"][t] = (raw, read, d)
        return io

    def _convert_dispatch(self, template: str, s4: Shape4, src, dst, count: int):
        """An upload/download conversion; `src`/`dst` are Views or whole raw buffers."""
        source = render(template, precision=self.precision, rows=s4.rows, w=s4.w, s=s4.s, c=s4.c)
        source = self._for_storage(source)
        pipeline = self._pipeline(source, template)
        views = [x if isinstance(x, View) else View(x, 0, x.size) for x in (src, dst)]
        grid = (ceil_div(count, 64), 1, 1)
        return _Prepared(pipeline, self._bind_group(pipeline, views), grid, -1, template)

    # --- work group tuning ----------------------------------------------------------
    def time_dispatch(self, d: Dispatch, repeat: int = 1) -> float:
        """One run of `d` alone on scratch buffers, in ms: GPU timestamps (a compute pass
        of its own with timestamp writes, as in profile()) when the device has them, else
        wall clock around submit and wait. inf when its shader does not compile.
        repeat > 1: that many dispatches back to back in the pass, and the mean (a small
        kernel's time then stands above the device's per-pass start-up jitter)."""
        import math

        import wgpu

        t0 = time.perf_counter()
        self.tune_stats["timed"] += 1
        dev = self.ctx.device
        if not hasattr(self, "_tune"):
            self._tune = {"pipelines": {}, "tensors": {}, "consts": {}}
        tune = self._tune
        if d.source not in tune["pipelines"]:  # None: the shader does not compile
            try:
                tune["pipelines"][d.source] = create_compute_pipeline(dev, d.source, d.kernel)
            except DeviceError:
                tune["pipelines"][d.source] = None
        pipeline = tune["pipelines"][d.source]
        if pipeline is None:
            self.tune_stats["tune_ms"] += (time.perf_counter() - t0) * 1e3
            return math.inf
        views = [self._scratch(b) for b in d.bindings]
        group = self._bind_group(pipeline, views)
        encoder = dev.create_command_encoder()
        if self.ctx.has_timestamps:
            if "queries" not in tune:
                tune["queries"] = dev.create_query_set(type="timestamp", count=2)
                tune["resolved"] = dev.create_buffer(
                    size=16, usage=wgpu.BufferUsage.QUERY_RESOLVE | wgpu.BufferUsage.COPY_SRC
                )
            writes = {"query_set": tune["queries"], "beginning_of_pass_write_index": 0,
                      "end_of_pass_write_index": 1}  # fmt: skip
            pass_ = encoder.begin_compute_pass(timestamp_writes=writes)
        else:
            pass_ = encoder.begin_compute_pass()
        pass_.set_pipeline(pipeline)
        pass_.set_bind_group(0, group)
        for _ in range(repeat):
            pass_.dispatch_workgroups(*d.workgroups)
        pass_.end()
        w0 = time.perf_counter()
        if self.ctx.has_timestamps:
            encoder.resolve_query_set(tune["queries"], 0, 2, tune["resolved"], 0)
            dev.queue.submit([encoder.finish()])
            ticks = np.frombuffer(dev.queue.read_buffer(tune["resolved"]), np.uint64)
            ms = (float(ticks[1]) - float(ticks[0])) / 1e6
        else:
            self._submit_and_wait(encoder, "sleep", RunStats())
            ms = (time.perf_counter() - w0) * 1e3
        self.tune_stats["tune_ms"] += (time.perf_counter() - t0) * 1e3
        return ms / repeat

    def _scratch(self, b: Binding):
        """A buffer or texture for binding `b` of a timed dispatch (kept for reuse)."""
        import wgpu

        tune = self._tune
        if b.role == "const":
            key = (b.data.__array_interface__["data"][0], b.data.nbytes, b.space, b.dtype)
            if key not in tune["consts"]:
                t0 = time.perf_counter()
                buf = self._const_buffer(b)
                self._init_clock["weight_upload"] -= time.perf_counter() - t0
                tune["consts"][key] = (buf, b.data)  # data kept alive: its address is the key
            buf = tune["consts"][key][0]
            return View(buf, 0, buf.size)
        if b.tensor not in tune["tensors"]:
            s4 = shape4(self.graph, b.tensor)
            if b.tensor in self.build_ctx.textures:
                from engine.gpu.storage import TEXTURE_FORMATS

                texture = self.ctx.device.create_texture(
                    size=(s4.w, s4.rows, s4.s),
                    format=TEXTURE_FORMATS[self.precision],
                    usage=wgpu.TextureUsage.STORAGE_BINDING | wgpu.TextureUsage.TEXTURE_BINDING,
                )
                view = texture.create_view(dimension="2d-array")
                tune["tensors"][b.tensor] = TextureView(texture, view, (s4.w, s4.rows, s4.s))
            else:
                size = max(16, s4.vec4_count * 4 * self._elem_bytes)
                buf = self.ctx.device.create_buffer(size=size, usage=wgpu.BufferUsage.STORAGE)
                tune["tensors"][b.tensor] = View(buf, 0, size)
        return tune["tensors"][b.tensor]

    def poison(self, value: float = float("nan")) -> None:
        """Fill every tensor buffer and texture with `value` (tests: unwritten elements fail)."""
        for view in self._buffers.values():
            filler = np.full(view.size // 4, value, np.float32)
            self.ctx.device.queue.write_buffer(view.buffer, view.offset, filler)
        for texture in {id(v.texture): v.texture for v in self._textures.values()}.values():
            fill_texture(self.ctx.device, texture, value, self.precision)

    # --- run -------------------------------------------------------------------------
    def _check_feeds(self, feeds) -> dict[int, np.ndarray]:
        g = self.graph
        names = {g.tensors[t].name: t for t in g.inputs}
        if not isinstance(feeds, dict):
            feeds = dict(zip(names, feeds, strict=False))
        out = {}
        for name, t in names.items():
            if name not in feeds:
                raise ValueError(f"missing input '{name}' (inputs: {list(names)})")
            a = np.asarray(feeds[name])
            want = g.tensors[t].shape
            if a.shape != want:
                raise ValueError(f"input '{name}': shape {a.shape}, expected {want}")
            if a.dtype.kind != "f":
                raise ValueError(f"input '{name}': dtype {a.dtype}, expected float32")
            out[t] = np.ascontiguousarray(a, np.float32)
        extra = set(feeds) - set(names)
        if extra:
            raise ValueError(f"unknown inputs {sorted(extra)} (inputs: {list(names)})")
        return out

    def run(self, feeds, sync: str | None = None) -> dict[str, np.ndarray]:
        """Run on numpy inputs (by name or in order); returns outputs by name."""
        sync = sync or self.sync
        if sync not in SYNC_MODES:
            raise ValueError(f"sync must be one of {SYNC_MODES}, not {sync!r}")
        values = self._check_feeds(feeds)
        stats = RunStats()
        t0 = time.perf_counter()
        dev, g = self.ctx.device, self.graph
        for t, a in values.items():
            dev.queue.write_buffer(self._io["in"][t][0], 0, a)
            stats.uploads += 1
        encoder = dev.create_command_encoder()
        pass_ = encoder.begin_compute_pass()
        for t in values:
            self._record(pass_, [self._io["in"][t][1]], stats)
        for step in self.steps:
            if isinstance(step, _GpuSegment):
                self._record(pass_, step.dispatches, stats)
                continue
            pass_.end()  # CPU fallback: finish what is queued, run the op, go on
            self._submit_and_wait(encoder, sync, stats)
            self._run_on_cpu(step.op_index, stats)
            encoder = dev.create_command_encoder()
            pass_ = encoder.begin_compute_pass()
        for t in g.outputs:
            self._record(pass_, [self._io["out"][t][2]], stats)
        pass_.end()
        for t in g.outputs:
            raw, read, _ = self._io["out"][t]
            encoder.copy_buffer_to_buffer(raw, 0, read, 0, raw.size)
        stats.encode_ms += (time.perf_counter() - t0) * 1e3
        self._submit_and_wait(encoder, sync, stats, maps=[self._io["out"][t][1] for t in g.outputs])
        result = {}
        for t in g.outputs:
            read = self._io["out"][t][1]
            n = int(np.prod(g.tensors[t].shape))
            # read_mapped() copies the mapped range already (a fresh bytearray)
            result[g.tensors[t].name] = np.frombuffer(read.read_mapped(), np.float32, n).reshape(
                g.tensors[t].shape
            )
            read.unmap()
            stats.readbacks += 1
        stats.total_ms = (time.perf_counter() - t0) * 1e3
        self.stats = stats
        return result

    # --- GPU-resident path -------------------------------------------------------------
    def tensor_layout(self, name: str) -> TensorLayout:
        """Where a graph input/output lives on the GPU and how it is laid out (PHWC4)."""
        g = self.graph
        for t in list(g.inputs) + list(g.outputs):
            if g.tensors[t].name == name:
                view = self._buffers[t]
                b, h, w, c = phwc4_shape(g.tensors[t].shape)
                return TensorLayout(name, tuple(g.tensors[t].shape), (b, h, w, c), slices(c),
                                    self.precision, view.buffer, view.offset, view.size)  # fmt: skip
        names = [g.tensors[t].name for t in list(g.inputs) + list(g.outputs)]
        raise ValueError(f"no graph input/output named '{name}' (have: {names})")

    def encode(self, encoder) -> RunStats:
        """Record the model into a caller's command encoder: one compute pass, no transfers.

        The caller has written the inputs' PHWC4 buffers (see tensor_layout(), e.g.
        with a pre-process kernel) and reads the outputs' in its own passes.
        """
        if any(isinstance(step, _CpuStep) for step in self.steps):
            raise ModelError(
                f"{self.graph.name}: ops {self.fallback_ops} run on the CPU; the GPU-resident "
                "path needs every op on the GPU (use run())"
            )
        stats = RunStats()
        pass_ = encoder.begin_compute_pass()
        for step in self.steps:
            self._record(pass_, step.dispatches, stats)
        pass_.end()
        self.stats = stats
        return stats

    def profile(self, feeds) -> list[DispatchTime]:
        """GPU time of every dispatch of one run, from timestamp queries.

        Each dispatch gets a compute pass of its own with timestamp writes, so the
        total is a little above a normal run's. Needs the adapter's timestamp-query.
        """
        import wgpu

        if not self.ctx.has_timestamps:
            raise DeviceError(f"{self.ctx.name} has no timestamp-query feature")
        self.run(feeds)  # uploads the inputs; the profiled pass recomputes from them
        dispatches = [
            d for step in self.steps if isinstance(step, _GpuSegment) for d in step.dispatches
        ]
        dev, n = self.ctx.device, len(dispatches)
        queries = dev.create_query_set(type="timestamp", count=2 * n)
        resolved = dev.create_buffer(
            size=16 * n, usage=wgpu.BufferUsage.QUERY_RESOLVE | wgpu.BufferUsage.COPY_SRC
        )
        encoder = dev.create_command_encoder()
        for i, d in enumerate(dispatches):
            writes = {"query_set": queries, "beginning_of_pass_write_index": 2 * i,
                      "end_of_pass_write_index": 2 * i + 1}  # fmt: skip
            pass_ = encoder.begin_compute_pass(timestamp_writes=writes)
            self._record(pass_, [d], RunStats())
            pass_.end()
        encoder.resolve_query_set(queries, 0, 2 * n, resolved, 0)
        dev.queue.submit([encoder.finish()])
        ticks = np.frombuffer(dev.queue.read_buffer(resolved), np.uint64).reshape(n, 2)
        # wgpu reports timestamps in nanoseconds
        ms = (ticks[:, 1].astype(np.float64) - ticks[:, 0]) / 1e6
        ops = self.graph.ops
        return [
            DispatchTime(
                d.op_index, ops[d.op_index].type if d.op_index >= 0 else "io", d.kernel, float(t)
            )
            for d, t in zip(dispatches, ms, strict=True)
        ]

    def _record(self, pass_, dispatches, stats: RunStats) -> None:
        for d in dispatches:
            pass_.set_pipeline(d.pipeline)
            pass_.set_bind_group(0, d.group)
            pass_.dispatch_workgroups(*d.grid)
            stats.dispatches += 1

    def _submit_and_wait(self, encoder, sync: str, stats: RunStats, maps=()) -> None:
        import wgpu

        dev = self.ctx.device
        dev.queue.submit([encoder.finish()])
        stats.submits += 1
        w0, c0 = time.perf_counter(), time.process_time()
        if not maps:  # nothing to map: wait on a tiny buffer copy
            maps = [self._fence()]
        if sync == "sleep":
            for buf in maps:
                buf.map_sync(wgpu.MapMode.READ)
        else:
            promises = [buf.map_async(wgpu.MapMode.READ) for buf in maps]
            # "pending" until the map callback fires ("pending-fulfilled" after it)
            while any(p._state == "pending" for p in promises):
                dev._poll(False)
            for p in promises:
                p.sync_wait()
        if maps and maps[0] is getattr(self, "_fence_buf", None):
            maps[0].unmap()
        stats.wait_ms += (time.perf_counter() - w0) * 1e3
        stats.wait_cpu_ms += (time.process_time() - c0) * 1e3

    def _fence(self):
        import wgpu

        if not hasattr(self, "_fence_buf"):
            self._fence_buf = self.ctx.device.create_buffer(
                size=16, usage=wgpu.BufferUsage.MAP_READ | wgpu.BufferUsage.COPY_DST
            )
        return self._fence_buf

    def _run_on_cpu(self, op_index: int, stats: RunStats) -> None:
        """Run one op with the reference kernel: read its inputs back, upload its outputs."""
        g = self.graph
        op = g.ops[op_index]
        values = {t: self._read_tensor(t) for t in set(tensors_read(op))}
        stats.readbacks += sum(1 for t in values if not g.tensors[t].is_constant)
        inputs = [None if t < 0 else values[t] for t in op.inputs]
        fn = reference_kernels.kernel(op.type)
        outputs = run_with_extras(fn, op, inputs, values) if has_extras(op) else fn(op, inputs)
        for t, value in zip(op.outputs, outputs, strict=True):
            self._write_tensor(t, value)
            stats.uploads += 1

    def read_phwc4(self, t: int) -> np.ndarray:
        """Tensor t's stored PHWC4 data, [slices, B*H, W, 4] in the storage type (padded
        lanes included), from its buffer or texture: one readback (tests, CPU fallback)."""
        s4 = shape4(self.graph, t)
        dt = np.float16 if self.precision == "fp16" else np.float32
        if t in self._textures:
            return read_texels(self.ctx.device, self._textures[t], dt)
        view = self._buffers[t]
        raw = self.ctx.device.queue.read_buffer(view.buffer, view.offset, view.size)
        return np.frombuffer(raw, dt, s4.vec4_count * 4).reshape(s4.s, s4.rows, s4.w, 4)

    def _read_tensor(self, t: int) -> np.ndarray:
        tensor = self.graph.tensors[t]
        if tensor.is_constant:
            return tensor.data
        s4 = shape4(self.graph, t)
        phwc4 = self.read_phwc4(t)
        hwc = phwc4.transpose(1, 2, 0, 3).reshape(s4.rows, s4.w, s4.s * 4)[:, :, : s4.c]
        return hwc.astype(np.float32).reshape(tensor.shape)

    def _write_tensor(self, t: int, value: np.ndarray) -> None:
        s4 = shape4(self.graph, t)
        dt = np.float16 if self.precision == "fp16" else np.float32
        hwc = np.zeros((s4.rows, s4.w, s4.s * 4), dt)
        hwc[:, :, : s4.c] = np.asarray(value).reshape(s4.rows, s4.w, s4.c)
        phwc4 = np.ascontiguousarray(hwc.reshape(s4.rows, s4.w, s4.s, 4).transpose(2, 0, 1, 3))
        if t in self._textures:
            write_texels(self.ctx.device, self._textures[t].texture, phwc4)
            return
        view = self._buffers[t]
        self.ctx.device.queue.write_buffer(view.buffer, view.offset, phwc4)


def compile_threads() -> int:
    """Threads that compile pipelines: ENGINE_COMPILE_THREADS, else the usable CPUs (<= 8)."""
    env = os.environ.get("ENGINE_COMPILE_THREADS", "")
    if env.isdigit() and int(env) > 0:
        return int(env)
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cpus = os.cpu_count() or 1
    return max(1, min(cpus, 8))


def _resource(v: View | TextureView):
    """A bind group resource: a texture view, or a buffer range."""
    if isinstance(v, TextureView):
        return v.view
    return {"buffer": v.buffer, "offset": v.offset, "size": v.size}


def _apply_transforms(graph: Graph) -> Graph:
    try:
        from engine.transforms import run_all
    except ImportError:
        return graph
    return run_all(graph)
