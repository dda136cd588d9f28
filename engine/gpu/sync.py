"""Waiting for the GPU and timing its stages, without reading any tensor back.

- `Fence`: block until a frame's work is done. `sleep` parks the thread on wgpu's
  poll-thread event (map_sync); `spin` polls the device in a loop without sleeping (lower
  wake-up latency, one core busy). Returns wall and CPU milliseconds of the wait; CPU is the
  waiting thread's own (thread_time): on lavapipe the process also holds the rasteriser's
  threads, whose work is the GPU's.
- `GpuMarks`: GPU timestamps at stage boundaries. Each mark is an empty compute pass that
  writes one timestamp at its beginning, so stages owned by others (the engine's pass, the
  pre-process pass) need no hooks. Exact on in-order adapters (lavapipe runs passes one
  after another); approximate where a GPU overlaps passes. Reading the timestamps back is a
  small map of timing data, counted apart from tensors (`readbacks`).
- usage: `marks.begin(enc); ...; marks.mark(enc, "inference"); marks.finish(enc); fence.signal(enc);
  submit; fence.wait("spin"); marks.read_ms()`
"""

from __future__ import annotations

import time

import numpy as np

SYNC_MODES = ("sleep", "spin")


class Fence:
    """Knows when a frame's GPU work is done: the frame's encoder ends with a 16-byte copy
    into a MAP_READ buffer, and waiting is mapping it. (wgpu 0.32's
    queue.on_submitted_work_done_async fails on a callback signature mismatch.) The bytes
    are a constant, not a tensor; `maps` counts the waits."""

    def __init__(self, device):
        import wgpu

        self.device = device
        self.src = device.create_buffer(size=16, usage=wgpu.BufferUsage.COPY_SRC)
        self.dst = device.create_buffer(
            size=16, usage=wgpu.BufferUsage.MAP_READ | wgpu.BufferUsage.COPY_DST
        )
        self.maps = 0

    def signal(self, encoder) -> None:
        """Record the fence at the end of the frame's encoder."""
        encoder.copy_buffer_to_buffer(self.src, 0, self.dst, 0, 16)

    def wait(self, mode: str) -> tuple[float, float]:
        """Wait for the GPU to pass the fence; (wall ms, CPU ms of this thread meanwhile)."""
        import wgpu

        w0, c0 = time.perf_counter(), time.thread_time()
        if mode == "sleep":
            self.dst.map_sync(wgpu.MapMode.READ)
        elif mode == "spin":
            promise = self.dst.map_async(wgpu.MapMode.READ)
            while promise._state == "pending":  # "pending-fulfilled" once the callback fired
                self.device._poll(False)
            promise.sync_wait()
        else:
            raise ValueError(f"sync must be one of {SYNC_MODES}, not {mode!r}")
        self.dst.unmap()
        self.maps += 1
        return (time.perf_counter() - w0) * 1e3, (time.thread_time() - c0) * 1e3


class GpuMarks:
    """Timestamp marks between stages of one command encoder (one frame)."""

    def __init__(self, device, capacity: int = 32):
        import wgpu

        self.device, self.capacity = device, capacity
        self.queries = device.create_query_set(type="timestamp", count=capacity)
        size = 8 * capacity
        self.resolved = device.create_buffer(
            size=size, usage=wgpu.BufferUsage.QUERY_RESOLVE | wgpu.BufferUsage.COPY_SRC
        )
        self.readable = device.create_buffer(
            size=size, usage=wgpu.BufferUsage.MAP_READ | wgpu.BufferUsage.COPY_DST
        )
        self.names: list[str] = []
        self.readbacks = 0

    def begin(self, encoder) -> None:
        self.names = []
        self.mark(encoder, "")

    def mark(self, encoder, name: str) -> None:
        """Timestamp here; `name` is the stage that ends at this mark."""
        if len(self.names) >= self.capacity:
            return
        writes = {"query_set": self.queries, "beginning_of_pass_write_index": len(self.names)}
        encoder.begin_compute_pass(timestamp_writes=writes).end()
        self.names.append(name)

    def finish(self, encoder) -> None:
        n = len(self.names)
        encoder.resolve_query_set(self.queries, 0, n, self.resolved, 0)
        encoder.copy_buffer_to_buffer(self.resolved, 0, self.readable, 0, 8 * n)

    def read_ms(self) -> dict[str, float]:
        """Stage -> GPU ms (stages with the same name add up); call after the wait."""
        import wgpu

        n = len(self.names)
        self.readable.map_sync(wgpu.MapMode.READ, 0, 8 * n)
        ticks = np.frombuffer(self.readable.read_mapped(0, 8 * n), np.uint64).astype(np.float64)
        self.readable.unmap()
        self.readbacks += 1
        out: dict[str, float] = {}
        for i in range(1, n):
            ms = max(0.0, (ticks[i] - ticks[i - 1]) / 1e6)  # wgpu reports nanoseconds
            out[self.names[i]] = out.get(self.names[i], 0.0) + ms
        return out
