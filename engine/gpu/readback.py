"""Ranges of GPU buffers read back with one map: the small results a stage reads per frame.

- input: named (buffer, offset, size) ranges, added once; per frame `encode(encoder)`
  records the copies (all, or the names asked for) at the end of an encoder
- output: `read()` -> {name: bytes} after one wait (sync "sleep" or "spin"), counted in
  `maps` and in the owner's QueueCounts (engine/gpu/stages.py)
- usage:
    rb = Readback(device, sync="sleep"); rb.add("status", buf, 0, 16)
    rb.encode(encoder); queue.submit(...); data = rb.read()
"""

from __future__ import annotations


class Readback:
    """One mappable buffer holding every added range (see the module docstring)."""

    def __init__(self, device, sync: str = "sleep", counts=None):
        self.device, self.sync, self.counts = device, sync, counts
        self.items: list[tuple[str, object, int, int, int]] = []  # name, buf, off, size, at
        self.size = 0
        self.buffer = None
        self.maps = 0

    def add(self, name: str, buffer, offset: int = 0, size: int | None = None) -> None:
        size = buffer.size - offset if size is None else size
        self.items.append((name, buffer, offset, size, self.size))
        self.size += -(-size // 16) * 16
        self.buffer = None

    def encode(self, encoder, names=None) -> None:
        """Record the copies (of `names` only, when given) into `encoder`."""
        import wgpu

        if self.buffer is None:
            self.buffer = self.device.create_buffer(
                size=max(16, self.size), usage=wgpu.BufferUsage.MAP_READ | wgpu.BufferUsage.COPY_DST
            )
        for name, buf, off, size, at in self.items:
            if names is None or name in names:
                encoder.copy_buffer_to_buffer(buf, off, self.buffer, at, size)

    def read(self) -> dict[str, bytes]:
        """Wait for the GPU (sync mode `sleep` or `spin`), then every range's bytes."""
        from engine.gpu.sync import wait_mapped

        wait_mapped(self.device, [self.buffer], self.sync)
        data = bytes(self.buffer.read_mapped())
        self.buffer.unmap()
        self.maps += 1
        if self.counts is not None:
            self.counts.reads += 1
        return {name: data[at : at + size] for name, _, _, size, at in self.items}

    def destroy(self) -> None:
        if self.buffer is not None:
            self.buffer.destroy()
            self.buffer = None
