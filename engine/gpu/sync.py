"""Waiting for the GPU, the one way the engine and the app do it.

- `wait_mapped(device, buffers, mode)`: map MAP_READ buffers whose copies end the
  submitted work; returns once the GPU got there. `sleep` parks the thread on wgpu's
  poll-thread event (map_sync); `spin` polls the device in a loop without sleeping
  (lower wake-up latency, one core busy). Returns the wall and CPU milliseconds of the
  wait; CPU is the waiting thread's own (thread_time): on lavapipe the process also holds
  the rasteriser's threads, whose work is the GPU's, not the wait's.
- `Fence`: a 16-byte copy into a MAP_READ buffer recorded at the end of an encoder;
  waiting is mapping it (wgpu 0.32's queue.on_submitted_work_done_async fails on a
  callback signature mismatch). The bytes are a constant, not a tensor.
- usage: `fence.signal(encoder); queue.submit(...); wall, cpu = fence.wait("spin")`
"""

from __future__ import annotations

import time

SYNC_MODES = ("sleep", "spin")

MAP_READ_SUBMITTED = "READ_NOSYNC"
"""The map mode for buffers that only copies of submitted work write (all of the engine's
and the app's readbacks). wgpu-py's plain READ first submits an empty command buffer, a
workaround for data written through a mapping at creation (wgpu-native#305,
gfx-rs/wgpu#5173), which none of these buffers are; behind a busy lavapipe queue that
submit cost 0.4 ms of the mapping thread, three times per ar-demo frame (fence,
timestamps, frame).
"READ_NOSYNC" is wgpu-py 0.32's name for READ without it (pyproject pins 0.32)."""


def check_sync(mode: str) -> str:
    if mode not in SYNC_MODES:
        raise ValueError(f"sync must be one of {SYNC_MODES}, not {mode!r}")
    return mode


def wait_mapped(device, buffers, mode: str) -> tuple[float, float]:
    """Map every buffer for reading (the caller unmaps); (wall ms, thread CPU ms) waited."""
    check_sync(mode)
    w0, c0 = time.perf_counter(), time.thread_time()
    if mode == "sleep":
        for buf in buffers:
            buf.map_sync(MAP_READ_SUBMITTED)
    else:
        promises = [buf.map_async(MAP_READ_SUBMITTED) for buf in buffers]
        # "pending" until the map callback fires ("pending-fulfilled" after it)
        while any(p._state == "pending" for p in promises):
            device._poll(False)
        for p in promises:
            p.sync_wait()
    return (time.perf_counter() - w0) * 1e3, (time.thread_time() - c0) * 1e3


class Fence:
    """Knows when the work of an encoder is done (see the module docstring); `maps`
    counts the waits."""

    def __init__(self, device):
        import wgpu

        self.device = device
        self.src = device.create_buffer(size=16, usage=wgpu.BufferUsage.COPY_SRC)
        self.dst = device.create_buffer(
            size=16, usage=wgpu.BufferUsage.MAP_READ | wgpu.BufferUsage.COPY_DST
        )
        self.maps = 0

    def signal(self, encoder) -> None:
        """Record the fence at the end of `encoder`."""
        encoder.copy_buffer_to_buffer(self.src, 0, self.dst, 0, 16)

    def wait(self, mode: str) -> tuple[float, float]:
        """Wait for the GPU to pass the fence; (wall ms, CPU ms of this thread meanwhile)."""
        times = wait_mapped(self.device, [self.dst], mode)
        self.dst.unmap()
        self.maps += 1
        return times
