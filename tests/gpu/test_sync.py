"""engine/gpu/sync.py: waiting maps the buffer once the copies of submitted work are done,
in both sync modes, with the map mode that skips wgpu-py's extra empty submit; the bytes
read are those the GPU copied (random data, a fresh buffer each time)."""

from __future__ import annotations

import numpy as np
import pytest

from engine.gpu.sync import MAP_READ_SUBMITTED, Fence, wait_mapped
from tests.helpers.gpu import gpu_context

CTX = gpu_context()


def _copied(data: np.ndarray):
    """A MAP_READ buffer filled by a copy in a submitted command buffer (never mapped at
    creation: the case MAP_READ_SUBMITTED is for)."""
    import wgpu

    device, u = CTX.device, wgpu.BufferUsage
    src = device.create_buffer(size=data.nbytes, usage=u.COPY_SRC | u.COPY_DST)
    device.queue.write_buffer(src, 0, data)
    dst = device.create_buffer(size=data.nbytes, usage=u.MAP_READ | u.COPY_DST)
    encoder = device.create_command_encoder()
    encoder.copy_buffer_to_buffer(src, 0, dst, 0, data.nbytes)
    return encoder, dst


@pytest.mark.parametrize("mode", ["sleep", "spin"])
def test_wait_mapped_reads_what_the_gpu_copied(mode):
    rng = np.random.default_rng(7)
    for size in (16, 4096, 1 << 20):
        data = rng.integers(0, 2**32, size // 4, dtype=np.uint32)
        encoder, dst = _copied(data)
        fence = Fence(CTX.device)
        fence.signal(encoder)
        CTX.device.queue.submit([encoder.finish()])
        fence.wait(mode)
        wait_mapped(CTX.device, [dst], mode)
        got = np.frombuffer(dst.read_mapped(), np.uint32).copy()
        dst.unmap()
        assert np.array_equal(got, data), size


def test_map_mode_is_one_wgpu_accepts():
    """The pinned wgpu-py still knows the mode (a rename would fail here, not in the app)."""
    data = np.arange(64, dtype=np.uint32)
    encoder, dst = _copied(data)
    CTX.device.queue.submit([encoder.finish()])
    dst.map_sync(MAP_READ_SUBMITTED)
    assert np.array_equal(np.frombuffer(dst.read_mapped(), np.uint32), data)
    dst.unmap()
