"""GPU timestamps: the one read-back of timing data (needs the timestamp-query feature).

- `PassTimer`: one timestamp pair per compute pass (begin and end of each pass);
  `ms()` gives each pass's GPU time. The engine's profile(), the work group tuner's
  timer and the storage probe time their passes with it.
- `GpuMarks`: timestamps at stage boundaries of one command encoder. Each mark is an
  empty compute pass that writes one timestamp at its beginning, so stages owned by
  others (the engine's pass, the pre-process pass) need no hooks. Exact on in-order
  adapters (lavapipe runs passes one after another); approximate where a GPU overlaps
  passes. `readbacks` counts the maps of timing data, apart from tensors.
wgpu reports timestamps in nanoseconds.
"""

from __future__ import annotations

import numpy as np

from engine.gpu.sync import MAP_READ_SUBMITTED


class PassTimer:
    """Begin/end timestamps for up to `passes` compute passes of one submit."""

    def __init__(self, device, passes: int):
        import wgpu

        self.device, self.passes = device, passes
        self.queries = device.create_query_set(type="timestamp", count=2 * passes)
        self.resolved = device.create_buffer(
            size=16 * passes, usage=wgpu.BufferUsage.QUERY_RESOLVE | wgpu.BufferUsage.COPY_SRC
        )

    def begin_pass(self, encoder, index: int):
        """A compute pass whose GPU time is pass `index`."""
        writes = {"query_set": self.queries, "beginning_of_pass_write_index": 2 * index,
                  "end_of_pass_write_index": 2 * index + 1}  # fmt: skip
        return encoder.begin_compute_pass(timestamp_writes=writes)

    def resolve(self, encoder, count: int | None = None) -> None:
        """Record the resolve of the first `count` passes (default all) into the buffer."""
        n = self.passes if count is None else count
        encoder.resolve_query_set(self.queries, 0, 2 * n, self.resolved, 0)

    def ms(self, count: int | None = None) -> np.ndarray:
        """GPU ms of the first `count` passes (after the submit that resolved them)."""
        n = self.passes if count is None else count
        raw = self.device.queue.read_buffer(self.resolved, 0, 16 * n)
        ticks = np.frombuffer(raw, np.uint64).reshape(n, 2).astype(np.float64)
        return (ticks[:, 1] - ticks[:, 0]) / 1e6


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
        n = len(self.names)
        self.readable.map_sync(MAP_READ_SUBMITTED, 0, 8 * n)
        ticks = np.frombuffer(self.readable.read_mapped(0, 8 * n), np.uint64).astype(np.float64)
        self.readable.unmap()
        self.readbacks += 1
        out: dict[str, float] = {}
        for i in range(1, n):
            ms = max(0.0, (ticks[i] - ticks[i - 1]) / 1e6)
            out[self.names[i]] = out.get(self.names[i], 0.0) + ms
        return out
