"""Small WebGPU helpers shared by the post-process stages (buffers, bind groups, dispatches);
pipelines come from engine.gpu.device.compute_pipeline (the context's cache)."""

from __future__ import annotations

import numpy as np


def bind_group(device, pipeline, resources: list) -> object:
    """Bind group 0 of `pipeline`: each resource is a buffer, (buffer, offset, size) or a
    texture view / sampler."""
    import wgpu

    entries = []
    for i, r in enumerate(resources):
        if isinstance(r, tuple):
            buf, offset, size = r
            r = {"buffer": buf, "offset": offset, "size": size}
        elif isinstance(r, wgpu.GPUBuffer):
            r = {"buffer": r, "offset": 0, "size": r.size}
        entries.append({"binding": i, "resource": r})
    return device.create_bind_group(layout=pipeline.get_bind_group_layout(0), entries=entries)


def zeros_buffer(device, nbytes: int, usage) -> object:
    """A zero-filled buffer of at least 16 bytes (a multiple of 16)."""
    nbytes = max(16, -(-nbytes // 16) * 16)
    return device.create_buffer_with_data(data=np.zeros(nbytes, np.uint8), usage=usage)


def dispatch(encoder, pipeline, group, grid: tuple[int, int, int]) -> None:
    """Record one dispatch in a compute pass of its own."""
    pass_ = encoder.begin_compute_pass()
    pass_.set_pipeline(pipeline)
    pass_.set_bind_group(0, group)
    pass_.dispatch_workgroups(*grid)
    pass_.end()


def wgsl_float(x: float) -> str:
    """A WGSL f32 literal that round-trips `x` (repr of the float32 value)."""
    v = float(np.float32(x))
    s = repr(v)
    if "inf" in s or "nan" in s:
        raise ValueError(f"{x} has no WGSL literal")
    return s if ("." in s or "e" in s) else s + ".0"
