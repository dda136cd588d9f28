"""A model recorded behind a condition the GPU writes: `Engine.encode(encoder, gate=...)`.

- input: the engine's dispatches; a gate: (buffer, byte offset) of a u32 word a GPU stage
  wrote before the model runs (non-zero: run)
- output, recorded into the caller's compute pass: one dispatch of shaders/engine/gate.wgsl
  that writes each dispatch's work group count (or 0) into an INDIRECT buffer, then every
  dispatch of the model as `dispatch_workgroups_indirect` from it
- why: a solution's GPU frame decides on the GPU whether a model is needed this frame (the
  detector while an object is tracked, a crop slot association left empty) and nothing
  is read back to tell the CPU; recording the model behind the gate skips its work at the
  cost of one small dispatch (and wgpu's own check of each indirect dispatch, which the
  engine's instance leaves out: engine/gpu/device.py INSTANCE_FLAGS)
- usage: `gated = GatedDispatches(ctx, dispatches, gate_buffer, 0)`; per frame
  `gated.record(pass_, stats)` (the runtime keeps one per gate: runtime.Runtime.encode)
"""

from __future__ import annotations

import numpy as np

from engine.gpu.kernels.base import Binding, render_shader

BINDINGS = (
    Binding("in", name="gate", type="array<u32>"),
    Binding("in", name="grids", type="array<vec4<u32>>"),
    Binding("out", name="args", type="array<vec4<u32>>"),
)
ARGS_STRIDE = 16  # bytes per dispatch's indirect args: (x, y, z) and a pad word


class GatedDispatches:
    """One model's dispatches behind one gate word (see the module docstring)."""

    def __init__(self, ctx, dispatches: list, gate, offset: int):
        import wgpu

        from engine.gpu.device import compute_pipeline
        from engine.gpu.stages import bind_group

        if offset % 4:
            raise ValueError(f"gate offset {offset}: not a multiple of 4 (a u32 word)")
        self.dispatches = dispatches
        n = len(dispatches)
        grids = np.zeros((max(1, n), 4), np.uint32)
        for i, d in enumerate(dispatches):
            grids[i, :3] = d.grid
        usage = wgpu.BufferUsage
        dev = ctx.device
        self.grids = dev.create_buffer_with_data(data=grids, usage=usage.STORAGE)
        self.args = dev.create_buffer(size=grids.nbytes, usage=usage.STORAGE | usage.INDIRECT)
        source = render_shader("gate.wgsl", BINDINGS, n=n, word=offset // 4)
        self.pipeline = compute_pipeline(ctx, source, "gate")
        self.group = bind_group(dev, self.pipeline, BINDINGS,
                                {"gate": gate, "grids": self.grids, "args": self.args})  # fmt: skip
        self.blocks = -(-n // 64)

    def record(self, pass_, stats) -> None:
        """The gate's dispatch, then each of the model's from its indirect args."""
        from engine.gpu.recorder import record_indirect

        pass_.set_pipeline(self.pipeline)
        pass_.set_bind_group(0, self.group)
        pass_.dispatch_workgroups(self.blocks, 1, 1)
        record_indirect(pass_, self.dispatches, self.args, ARGS_STRIDE, stats)

    def destroy(self) -> None:
        self.grids.destroy()
        self.args.destroy()
