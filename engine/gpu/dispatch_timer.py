"""Timing one dispatch alone on the device: the work group tuner's clock and the benchmarks'.

`DispatchTimer(ctx, graph, precision, textures, tiles).time(d, repeat)` runs Dispatch `d`
on scratch tensors of the right shape and kind (kept for reuse; `tiles`: the folded
texture tensors, BuildContext.texture_tiles) and returns its ms: GPU
timestamps (a compute pass of its own, as in profile()) when the device has them, else
wall clock around submit and wait. inf when its shader does not compile. repeat > 1:
that many dispatches back to back in the pass, and the mean (a small kernel's time then
stands above the device's per-pass start-up jitter).
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping

from engine.errors import DeviceError
from engine.gpu.device import GpuContext, create_compute_pipeline
from engine.gpu.kernels.base import Binding, Dispatch, shape4
from engine.gpu.resources import constant_buffer, resource
from engine.gpu.storage import TextureView, View
from engine.gpu.sync import Fence
from engine.gpu.timestamps import PassTimer
from engine.memory.plan import footprint
from engine.model.ir import Graph
from engine.precision import Precision


class DispatchTimer:
    def __init__(self, ctx: GpuContext, graph: Graph, precision: Precision,
                 textures: frozenset[int] = frozenset(),
                 tiles: Mapping[int, tuple[int, int, int, int]] | None = None):  # fmt: skip
        self.ctx, self.device, self.graph = ctx, ctx.device, graph
        self.precision, self.textures, self.tiles = precision, textures, tiles or {}
        self.pipelines: dict[str, object] = {}  # None: the shader does not compile
        self.tensors: dict[int, View | TextureView] = {}
        self.consts: dict[tuple, tuple] = {}
        self.stats = {"timed": 0, "tune_ms": 0.0}
        self._timer = PassTimer(self.device, 1) if ctx.has_timestamps else None
        self._fence = Fence(self.device)

    def time(self, d: Dispatch, repeat: int = 1) -> float:
        t0 = time.perf_counter()
        self.stats["timed"] += 1
        try:
            return self._time(d, repeat)
        finally:
            self.stats["tune_ms"] += (time.perf_counter() - t0) * 1e3

    def _time(self, d: Dispatch, repeat: int) -> float:
        if d.source not in self.pipelines:
            try:
                self.pipelines[d.source] = create_compute_pipeline(self.device, d.source, d.kernel)
            except DeviceError:
                self.pipelines[d.source] = None
        pipeline = self.pipelines[d.source]
        if pipeline is None:
            return math.inf
        entries = [{"binding": i, "resource": resource(self._scratch(b))}
                   for i, b in enumerate(d.bindings)]  # fmt: skip
        group = self.device.create_bind_group(
            layout=pipeline.get_bind_group_layout(0), entries=entries
        )
        encoder = self.device.create_command_encoder()
        timer = self._timer
        pass_ = timer.begin_pass(encoder, 0) if timer else encoder.begin_compute_pass()
        pass_.set_pipeline(pipeline)
        pass_.set_bind_group(0, group)
        for _ in range(repeat):
            pass_.dispatch_workgroups(*d.workgroups)
        pass_.end()
        w0 = time.perf_counter()
        if timer:
            timer.resolve(encoder)
            self.device.queue.submit([encoder.finish()])
            ms = float(timer.ms()[0])
        else:
            self._fence.signal(encoder)
            self.device.queue.submit([encoder.finish()])
            self._fence.wait("sleep")
            ms = (time.perf_counter() - w0) * 1e3
        return ms / repeat

    def _scratch(self, b: Binding) -> View | TextureView:
        """A buffer or texture for binding `b` of a timed dispatch (kept for reuse)."""
        import wgpu

        if b.role == "const":
            key = (b.data.__array_interface__["data"][0], b.data.nbytes, b.space, b.dtype)
            if key not in self.consts:  # data kept alive: its address is the key
                self.consts[key] = (constant_buffer(self.device, b, self.precision), b.data)
            buf = self.consts[key][0]
            return View(buf, 0, buf.size)
        if b.tensor not in self.tensors:
            s4 = shape4(self.graph, b.tensor)
            if b.tensor in self.textures:
                extent, tiles = (s4.w, s4.rows, s4.s), self.tiles.get(b.tensor, (1, 1))[:2]
                w, h, _, layers = footprint(extent, tiles)
                texture = self.device.create_texture(
                    size=(w, h, layers),
                    format=self.precision.texture_format,
                    usage=wgpu.TextureUsage.STORAGE_BINDING | wgpu.TextureUsage.TEXTURE_BINDING,
                )
                view = texture.create_view(dimension="2d-array")
                self.tensors[b.tensor] = TextureView(texture, view, extent, 0, tiles)
            else:
                size = max(16, s4.vec4_count * self.precision.vec4_bytes)
                buf = self.device.create_buffer(size=size, usage=wgpu.BufferUsage.STORAGE)
                self.tensors[b.tensor] = View(buf, 0, size)
        return self.tensors[b.tensor]
