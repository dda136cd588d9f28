"""The engine: a model compiled once for one WebGPU device, then run with one wait.

    engine = Engine.from_tflite("models/face_landmark.tflite")
    outputs = engine.run({"input_1": x})

A thin front over three parts, each usable alone:
- compile (engine/gpu/compile.py): graph -> Program (transforms, kernel per op, placement,
  memory plans, dispatch specs), no GPU;
- resources + io (resources.py, io.py): the Program's buffers, textures, pipelines, bind
  groups and the graph I/O conversions, made once;
- runtime (runtime.py): run / encode / profile, with `sleep` or `spin` synchronisation.

Options are validated here; every default is deterministic (same model, same adapter ->
same kernels, storage and plan): storage "auto" is a rule over adapter facts
(storage_choice.py), work groups "heuristic" are rules over the device's limits; the
measured choices ("tune") are opt-in and cached per adapter (adapter_cache.py).
`kernels="compact"` picks the kernel set that compiles fastest (compile.KERNEL_SETS);
`kernels="staged"` answers from it at once and swaps in the optimized set, built on a
worker thread, between two runs (staged.py).

Dynamic shapes: a model with -1 dimensions (shape_signature) has its shapes propagated
from the inputs at load; `input_shapes={name: shape}` fixes those dimensions first (as
LiteRT's resize_tensor_input); int32 shape arithmetic then folds into constants.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from engine.config import settings
from engine.errors import DeviceError
from engine.gpu.adapter_cache import AdapterKey, cache_root
from engine.gpu.compile import (
    DEFAULT_WORKGROUPS,
    KERNEL_SETS,
    WORKGROUP_POLICIES,
    CompileOptions,
    Program,
    Target,
    compile_graph,
)
from engine.gpu.device import GpuContext, device_guard, shared_context
from engine.gpu.dispatch_timer import DispatchTimer
from engine.gpu.io import GraphIO, read_phwc4
from engine.gpu.kernels.base import Dispatch
from engine.gpu.resources import Resources
from engine.gpu.runtime import DispatchTime, RunStats, Runtime
from engine.gpu.staged import KERNEL_MODES, STAGED, OptimizedBuild
from engine.gpu.storage import fill_texture, texture_tiles
from engine.gpu.storage_choice import STORAGE_OPTIONS, resolve_storage
from engine.gpu.sync import SYNC_MODES, check_sync
from engine.model.importer import load_tflite
from engine.model.ir import Graph
from engine.model.layout import phwc4_shape, slices
from engine.precision import precision as precision_of

__all__ = ["DispatchTime", "Engine", "RunStats", "TensorLayout", "SYNC_MODES", "STORAGE_OPTIONS",
           "WORKGROUP_POLICIES", "DEFAULT_WORKGROUPS", "KERNEL_SETS"]  # fmt: skip


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
        input_shapes: dict[str, tuple[int, ...]] | None = None,
        kernels: str = "optimized",
    ):
        t0 = time.perf_counter()
        # what with_batch() builds the same model with, on this device
        self._rebuild = {"precision": precision, "sync": sync, "planner": planner,
                         "transforms": transforms, "storage": storage,
                         "texture_planner": texture_planner, "workgroups": workgroups,
                         "tune_method": tune_method, "cache_dir": cache_dir,
                         "kernels": kernels}  # fmt: skip
        prec = precision_of(precision)
        self.sync = check_sync(sync)
        self.ctx = context or shared_context(adapter)
        device_s = time.perf_counter() - t0  # 0 when the process has the device already
        if prec.device_feature and prec.device_feature not in self.ctx.features:
            raise DeviceError(f"{self.ctx.name} lacks {prec.device_feature}; use precision='fp32'")
        self.precision, self.planner, self.texture_planner = precision, planner, texture_planner
        self.storage_requested, self.workgroups = storage, workgroups
        root = cache_root(cache_dir) if cache_dir is not None else None
        self.storage = resolve_storage(storage, self.ctx, precision,
                                       root / "storage" if root else None)  # fmt: skip
        if kernels not in KERNEL_MODES:
            raise ValueError(f"kernels must be one of {KERNEL_MODES}, not {kernels!r}")
        staged = kernels == STAGED
        options = CompileOptions(precision, self.storage, planner, texture_planner, transforms,
                                 workgroups, tune_method, "compact" if staged else kernels)  # fmt: skip
        self.kernels = kernels
        self.kernels_running = options.kernels  # staged: "compact", then "optimized"
        self.target = Target.of(self.ctx)
        storage_s = time.perf_counter() - t0 - device_s
        self.tune_cache = None
        if workgroups == "tune":
            from engine.gpu.workgroups import TuneCache

            folder = root / "workgroups" if root else None
            self.tune_cache = TuneCache(AdapterKey.from_info(self.ctx.info), folder)
        self._timer: DispatchTimer | None = None
        self.program: Program = compile_graph(
            graph,
            options,
            self.target,
            input_shapes=input_shapes,
            timer=self._make_timer,
            tune_cache=self.tune_cache,
        )
        with device_guard(self.ctx):
            self.resources = Resources(self.program, self.ctx)
        self.io = GraphIO(self.resources)
        self.runtime = Runtime(self.resources, self.io)
        self.stats = RunStats()
        clock = {"device": device_s, "storage_choice": storage_s, **self.program.clock,
                 **self.resources.clock}  # fmt: skip
        self.init_ms = {k: v * 1e3 for k, v in clock.items()}
        self._staged: OptimizedBuild | None = None
        self.staged_error: str | None = None
        if staged:
            self._staged = OptimizedBuild(self.ctx, self.target, graph, options, input_shapes,
                                          self._make_timer, self.tune_cache)  # fmt: skip
        self._debug_report()

    @classmethod
    def from_tflite(cls, path: str | os.PathLike, **kwargs) -> Engine:
        return cls(load_tflite(Path(path)), **kwargs)

    def with_batch(self, n: int, context: GpuContext | None = None) -> Engine:
        """This model on n images at once (its inputs' batch of 1 made n: transforms/
        resize_inputs.rebatch; n = 1: the same model again), with this engine's options,
        on `context` (default: this engine's device); ModelError where the model does not
        carry a batch, ValueError for a staged engine (no one kernel set to match) or tuned
        work groups."""
        from engine.transforms.resize_inputs import rebatch

        if self.kernels == STAGED:
            raise ValueError("with_batch: a staged engine has no one kernel set to match")
        if self.workgroups == "tune":  # measured choices: another build may choose others
            raise ValueError("with_batch: tuned work groups are not the same from build to build")
        graph = self.source_graph if n == 1 else rebatch(self.source_graph, n)
        # the storage this engine resolved ("auto" is a rule, "tune" a measurement)
        options = {**self._rebuild, "storage": self.storage}
        return Engine(graph, context=context or self.ctx, **options)

    # --- lifetime: shared weights are reference counted per engine -----------------------
    def close(self) -> None:
        """Release this engine's share of the device's weights cache (idempotent)."""
        build = getattr(self, "_staged", None)
        if build is not None:  # the worker releases what it builds after this
            build.cancelled, self._staged = True, None
            if build.done and build.result is not None:
                build.result[1].release()
        runtime = getattr(self, "runtime", None)
        if runtime is not None:
            runtime.release_gates()
        resources = getattr(self, "resources", None)
        if resources is not None:
            resources.release()

    def __enter__(self) -> Engine:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # interpreter shutdown: the cache may be gone already
            pass

    # --- what was compiled ---------------------------------------------------------------
    @property
    def source_graph(self) -> Graph:
        return self.program.source_graph

    @property
    def graph(self) -> Graph:
        return self.program.graph

    @property
    def placement(self):
        return self.program.placement

    @property
    def memory(self):
        """The whole memory plan's figures (PlanStats): strategy, bytes, lower bound."""
        return self.program.plans.memory

    @property
    def buffer_memory(self):
        return self.program.plans.buffers

    @property
    def texture_memory(self):
        return self.program.plans.textures

    @property
    def fallback_ops(self) -> list[str]:
        return self.program.fallback_ops

    @property
    def dispatch_count(self) -> int:
        return self.program.dispatch_count

    @property
    def workgroup_choices(self) -> list:
        return self.program.choices

    @property
    def pipeline_stats(self) -> dict[str, int]:
        return self.resources.pipeline_stats

    @property
    def pipeline_sources(self) -> list[str]:
        """The WGSL of every pipeline this engine uses."""
        return list(self.resources.pipelines)

    @property
    def tune_stats(self) -> dict:
        return self._timer.stats if self._timer else {"timed": 0, "tune_ms": 0.0}

    # --- the staged start (staged.py) -------------------------------------------------
    def optimized_ready(self) -> bool:
        """kernels="staged": has the optimized set been swapped in (or is it ready to be at
        the next run)? True for the other kernel options."""
        return self._staged is None or self._staged.done

    def wait_optimized(self, timeout: float | None = None) -> bool:
        """kernels="staged": block until the optimized set is built (or failed), then swap
        it in; False when `timeout` passed first."""
        if self._staged is not None and not self._staged.wait(timeout):
            return False
        self._swap_in_optimized()
        return True

    def _swap_in_optimized(self) -> None:
        build = self._staged
        if build is None or not build.done:
            return
        self._staged = None
        built = build.take()
        if built is None:
            self.staged_error = build.error
            return
        old = self.resources
        self.program, self.resources, self.io, self.runtime = built
        self.kernels_running = "optimized"
        self.init_ms["optimized_ready"] = build.ready_s * 1e3
        old.release()

    def _not_staged(self, what: str) -> None:
        if self.kernels == STAGED:
            raise ValueError(f"{what}: kernels='staged' replaces the engine's buffers when the "
                             "optimized set is swapped in; use kernels='compact' or "
                             "'optimized' for the encode path")  # fmt: skip

    # --- running ---------------------------------------------------------------------
    def run(self, feeds, sync: str | None = None) -> dict[str, np.ndarray]:
        """Run on numpy inputs (by name or in order); returns outputs by name."""
        self._swap_in_optimized()
        with device_guard(self.ctx):
            outputs, self.stats = self.runtime.run(feeds, sync or self.sync)
        return outputs

    def encode(self, encoder, gate=None) -> RunStats:
        """Record the model into a caller's command encoder: one compute pass, no transfers.

        The caller has written the inputs' PHWC4 buffers (see tensor_layout(), e.g. with a
        pre-process kernel) and reads the outputs' in its own passes. `gate`: (buffer, byte
        offset) of a u32 word a GPU stage writes before this pass: the model runs only
        where it is non-zero (its dispatches indirect, their counts 0 otherwise:
        engine/gpu/gate.py)."""
        self._not_staged("encode()")
        with device_guard(self.ctx):
            self.stats = self.runtime.encode(encoder, gate)
        return self.stats

    def profile(self, feeds) -> list[DispatchTime]:
        """GPU time of every dispatch of one run, from timestamp queries."""
        with device_guard(self.ctx):
            return self.runtime.profile(feeds, self.sync)

    def tensor_layout(self, name: str) -> TensorLayout:
        """Where a graph input/output lives on the GPU and how it is laid out (PHWC4)."""
        self._not_staged("tensor_layout()")
        g = self.graph
        for t in list(g.inputs) + list(g.outputs):
            if g.tensors[t].name == name:
                view = self.resources.buffers[t]
                b, h, w, c = phwc4_shape(g.tensors[t].shape)
                return TensorLayout(name, tuple(g.tensors[t].shape), (b, h, w, c), slices(c),
                                    self.precision, view.buffer, view.offset, view.size)  # fmt: skip
        names = [g.tensors[t].name for t in list(g.inputs) + list(g.outputs)]
        raise ValueError(f"no graph input/output named '{name}' (have: {names})")

    def read_phwc4(self, t: int) -> np.ndarray:
        """Tensor t's stored PHWC4 data [slices, B*H, W, 4] (padded lanes included)."""
        return read_phwc4(self.resources, t)

    def poison(self, value: float = float("nan")) -> None:
        """Fill every tensor buffer and texture with `value` (tests: unwritten elements fail)."""
        res = self.resources
        for view in res.buffers.values():
            filler = np.full(view.size // 4, value, np.float32)
            res.device.queue.write_buffer(view.buffer, view.offset, filler)
        for texture in {id(v.texture): v.texture for v in res.textures.values()}.values():
            fill_texture(res.device, texture, value, res.precision)

    # --- timing one dispatch (work group tuning, benchmarks) ---------------------------
    def time_dispatch(self, d: Dispatch, repeat: int = 1) -> float:
        """One run of `d` (a dispatch of this engine's graph, as its kernels build it) alone
        on scratch tensors, in ms (dispatch_timer.py)."""
        if self._timer is None:
            tiles = texture_tiles(self.program.graph, self.program.plans.textures)
            self._make_timer(self.program.graph, self.program.textures, tiles)
        d = replace(d, arena=self.program.arena)
        return self._timer.time(d, repeat)

    def _make_timer(self, graph: Graph, textures: frozenset[int], tiles: dict | None = None):
        """The tuner's clock for the graph being compiled (compile.TimerFactory)."""
        prec = precision_of(self.precision)
        self._timer = DispatchTimer(self.ctx, graph, prec, textures, tiles)
        return self._timer.time

    def _debug_report(self) -> None:
        """ENGINE_DEBUG=1: storage, dispatches, fallbacks, plan, init; 3: every pipeline's WGSL."""
        level = settings().debug
        if level < 1:
            return
        m, res = self.memory, self.resources
        print(f"[engine] storage: {self.storage} (asked {self.storage_requested}); "
              f"{len(self.placement.textures)} texture tensors, {len(res.buffers)} buffers")  # fmt: skip
        print(f"[engine] {self.graph.name}: {len(self.source_graph.ops)} ops imported, "
              f"{len(self.graph.ops)} after transforms, {self.dispatch_count} dispatches, "
              f"{len(res.pipelines)} pipelines, CPU fallback: {self.fallback_ops or 'none'}")  # fmt: skip
        print(f"[engine] memory: {m.strategy} {m.total_bytes:,} B (naive {m.naive_bytes:,}, "
              f"lower bound {m.lower_bound:,}, {m.objects} objects)")  # fmt: skip
        print(f"[engine] init ms: {', '.join(f'{k} {v:.1f}' for k, v in self.init_ms.items())}")
        if level >= 3:
            for source in res.pipelines:
                print(f"[engine] --- WGSL ---\n{source}")
