"""What GPU stages outside the engine share: the vision stages (pre-process, SSD decode,
ROI, tracking, landmarks) and the app's effects.

- `bind_group(device, pipeline, bindings, resources)`: bind group 0 of a pipeline whose
  shader declared `bindings` (render_shader), filled by binding name;
- `zeros_buffer`, `dispatch` (one dispatch in a pass of its own), `wgsl_float` (a literal
  that round-trips a float32);
- `QueueCounts`: the submits and blocking reads a stage or a solution made (a frame's
  honest count: ar-demo's --stats and HUD show them);
- `release_engine`: an Engine's tensor memory destroyed now, not at garbage collection.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


def bind_group(device, pipeline, bindings, resources: dict) -> object:
    """Bind group 0 of `pipeline`, whose shader declares `bindings` (render_shader):
    binding i is resources[bindings[i].name], a buffer, (buffer, offset, size) or a texture
    view / sampler. A binding the pipeline does not use (its auto layout leaves it out) is
    left out of `resources`; a name that is no binding is a ValueError."""
    import wgpu

    unknown = set(resources) - {b.name for b in bindings}
    if unknown:
        names = [b.name for b in bindings]
        raise ValueError(f"resources {sorted(unknown)} are not among the bindings {names}")
    entries = []
    bound = [(i, resources[b.name]) for i, b in enumerate(bindings) if b.name in resources]
    for i, r in bound:
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


@dataclass
class QueueCounts:
    """Submits and blocking reads (a map waited for) made through it. Every stage of one
    solution shares one, so a frame's count is the difference of two readings."""

    submits: int = 0
    reads: int = 0

    def submit(self, device, encoder) -> None:
        """Finish `encoder` and submit it (counted)."""
        device.queue.submit([encoder.finish()])
        self.submits += 1

    def reading(self) -> tuple[int, int]:
        return self.submits, self.reads


def release_engine(engine) -> None:
    """Destroy an engine's tensor memory (buffers and textures) now rather than at garbage
    collection, and close it where the engine can (its share of shared weights); the
    engine is unusable afterwards."""
    close = getattr(engine, "close", None)
    if close is not None:
        close()
    res = engine.resources
    seen: set[int] = set()
    for view in list(res.buffers.values()) + list(res.textures.values()):
        obj = getattr(view, "buffer", None) or getattr(view, "texture", None)
        if obj is not None and id(obj) not in seen:
            seen.add(id(obj))
            obj.destroy()
