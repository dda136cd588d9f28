"""Running a compiled model: numpy in and out, into a caller's encoder, or profiled.

- `run(feeds, sync)`: upload inputs (HWC -> PHWC4 on the GPU), every dispatch of a GPU
  segment in one compute pass and one submit, outputs converted back on the GPU, one
  wait (engine/gpu/sync.py: `sleep` blocks, `spin` polls). The adapter class's submit
  plan (engine/gpu/submits.py) may submit part of the work early, without waiting, so a
  GPU computes while the rest is recorded. A CPU step (an op without a GPU kernel) ends
  the pass: submit, wait, read its inputs back, run the reference kernel, upload its
  outputs, go on in a new pass;
- `encode(encoder)`: the model into the caller's encoder, one compute pass, no transfers
  (the GPU-resident path: inputs already in their buffers, outputs read by later passes);
- `profile(feeds)`: GPU ms per dispatch, each in a pass of its own with timestamps.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from engine.errors import DeviceError, ModelError
from engine.gpu.compile import CpuStep, cpu_kernel
from engine.gpu.io import GraphIO, check_feeds, read_tensor, write_tensor
from engine.gpu.recorder import record
from engine.gpu.resources import Resources, Segment
from engine.gpu.submits import SubmitPlan, submit_plan
from engine.gpu.sync import Fence, check_sync, wait_mapped
from engine.gpu.timestamps import PassTimer
from engine.model.ir import tensors_read
from engine.reference.fused import has_extras, run_with_extras


@dataclass
class RunStats:
    """Figures of the last run()/encode()."""

    dispatches: int = 0
    submits: int = 0
    uploads: int = 0
    readbacks: int = 0
    encode_ms: float = 0.0
    wait_ms: float = 0.0
    wait_cpu_ms: float = 0.0  # CPU time the waiting thread burned (spin >> sleep)
    total_ms: float = 0.0


@dataclass(frozen=True)
class DispatchTime:
    op_index: int  # -1 for the input/output conversions
    op_type: str
    kernel: str
    gpu_ms: float


class Runtime:
    def __init__(self, res: Resources, io: GraphIO):
        self.res, self.io, self.device = res, io, res.device
        self.graph = res.program.graph
        self.fence = Fence(self.device)
        # a run's dispatches: input conversions, the GPU steps', output conversions
        self._total = len(io.inputs) + len(io.outputs)
        self._total += sum(len(s.dispatches) for s in res.steps if isinstance(s, Segment))
        self.submits = submit_plan(res.ctx.info)
        self.direct_recording = True  # recorder.py; False: through wgpu-py's methods
        self.gates: dict = {}  # (id(gate buffer), offset) -> (buffer, GatedDispatches)

    @property
    def submits(self) -> SubmitPlan:
        return self._submits

    @submits.setter
    def submits(self, plan: SubmitPlan) -> None:
        """Replace the adapter class's plan (benchmarks.engine.submit_sweep compares plans)."""
        self._submits, self._early = plan, sorted(plan.points(self._total))

    def run(self, feeds, sync: str) -> tuple[dict[str, np.ndarray], RunStats]:
        check_sync(sync)
        values = check_feeds(self.graph, feeds, self.res.program.integer_io)
        stats = RunStats()
        t0 = time.perf_counter()
        self.io.upload(values)
        stats.uploads += len(values)
        encoder = self.device.create_command_encoder()
        pass_ = encoder.begin_compute_pass()
        inputs = [self.io.inputs[t][1] for t in values]
        encoder, pass_ = self._record(encoder, pass_, inputs, stats)
        for step in self.res.steps:
            if isinstance(step, Segment):
                encoder, pass_ = self._record(encoder, pass_, step.dispatches, stats)
                continue
            pass_.end()  # CPU fallback: finish what is queued, run the op, go on
            self._submit_and_wait(encoder, sync, stats)
            self._run_on_cpu(step.op_index, stats)
            encoder = self.device.create_command_encoder()
            pass_ = encoder.begin_compute_pass()
        outputs = [convert for _, _, convert in self.io.outputs.values()]
        encoder, pass_ = self._record(encoder, pass_, outputs, stats)
        pass_.end()
        self.io.copy_outputs(encoder)
        stats.encode_ms += (time.perf_counter() - t0) * 1e3
        self._submit_and_wait(encoder, sync, stats, maps=self.io.readable())
        result = self.io.read_outputs()
        stats.readbacks += len(result)
        stats.total_ms = (time.perf_counter() - t0) * 1e3
        return result, stats

    def _record(self, encoder, pass_, dispatches: list, stats: RunStats):
        """record() with the submit plan's early submits (no wait: the queue keeps order)
        where they fall in `dispatches`. Returns the encoder and pass to go on with."""
        done, start = stats.dispatches, 0
        for point in self._early:
            if not done < point <= done + len(dispatches):
                continue
            record(pass_, dispatches[start : point - done], stats, self.direct_recording)
            start = point - done
            pass_.end()
            self.device.queue.submit([encoder.finish()])
            stats.submits += 1
            encoder = self.device.create_command_encoder()
            pass_ = encoder.begin_compute_pass()
        record(pass_, dispatches[start:], stats, self.direct_recording)
        return encoder, pass_

    def encode(self, encoder, gate=None) -> RunStats:
        """The model's dispatches into one compute pass of `encoder`; behind `gate`
        ((buffer, byte offset) of a u32 word, non-zero: run) when given (gate.py)."""
        if any(isinstance(step, CpuStep) for step in self.res.steps):
            raise ModelError(
                f"{self.graph.name}: ops {self.res.program.fallback_ops} run on the CPU; the "
                "GPU-resident path needs every op on the GPU (use run())"
            )
        stats = RunStats()
        pass_ = encoder.begin_compute_pass()
        if gate is None:
            for segment in self.res.segments:
                record(pass_, segment.dispatches, stats, self.direct_recording)
        else:
            self._gated(gate).record(pass_, stats)
        pass_.end()
        return stats

    def _gated(self, gate):
        """The model behind this gate word: one GatedDispatches per (buffer, offset)."""
        from engine.gpu.gate import GatedDispatches

        buffer, offset = gate
        key = (id(buffer), offset)
        if key not in self.gates:
            dispatches = [d for s in self.res.segments for d in s.dispatches]
            self.gates[key] = (buffer, GatedDispatches(self.res.ctx, dispatches, buffer, offset))
        return self.gates[key][1]

    def release_gates(self) -> None:
        for _, gated in self.gates.values():
            gated.destroy()
        self.gates = {}

    def profile(self, feeds, sync: str) -> list[DispatchTime]:
        """GPU time of every dispatch of one run (a pass of its own each, so the total is a
        little above a normal run's). Needs the adapter's timestamp-query."""
        if not self.res.ctx.has_timestamps:
            raise DeviceError(f"{self.res.ctx.name} has no timestamp-query feature")
        self.run(feeds, sync)  # uploads the inputs; the profiled pass recomputes from them
        dispatches = [d for s in self.res.segments for d in s.dispatches]
        timer = PassTimer(self.device, len(dispatches))
        encoder = self.device.create_command_encoder()
        for i, d in enumerate(dispatches):
            pass_ = timer.begin_pass(encoder, i)
            record(pass_, [d], RunStats())
            pass_.end()
        timer.resolve(encoder)
        self.device.queue.submit([encoder.finish()])
        ops = self.graph.ops
        return [
            DispatchTime(
                d.op_index, ops[d.op_index].type if d.op_index >= 0 else "io", d.kernel, float(ms)
            )  # fmt: skip
            for d, ms in zip(dispatches, timer.ms(), strict=True)
        ]

    def _submit_and_wait(self, encoder, sync: str, stats: RunStats, maps=()) -> None:
        if not maps:  # nothing to map: wait on the fence
            self.fence.signal(encoder)
        self.device.queue.submit([encoder.finish()])
        stats.submits += 1
        if maps:
            wall, cpu = wait_mapped(self.device, maps, sync)
        else:
            wall, cpu = self.fence.wait(sync)
        stats.wait_ms += wall
        stats.wait_cpu_ms += cpu

    def _run_on_cpu(self, op_index: int, stats: RunStats) -> None:
        """Run one op with the reference kernel: read its inputs back, upload its outputs."""
        g, res = self.graph, self.res
        op = g.ops[op_index]
        values = {t: read_tensor(res, t) for t in set(tensors_read(op))}
        stats.readbacks += sum(1 for t in values if not g.tensors[t].is_constant)
        inputs = [None if t < 0 else values[t] for t in op.inputs]
        fn = cpu_kernel(op, g, op_index)
        where = f"{g.name}: op #{op_index} {op.type} (CPU fallback)"
        try:
            outputs = run_with_extras(fn, op, inputs, values) if has_extras(op) else fn(op, inputs)
        except ModelError as exc:  # the reference kernels name the op type, not the file
            raise ModelError(f"{where}: {exc}") from None
        except Exception as exc:  # a shape or option the reference kernel cannot take
            raise ModelError(f"{where}: cannot run ({type(exc).__name__}: {exc})") from exc
        if len(outputs) != len(op.outputs):
            raise ModelError(f"{where}: made {len(outputs)} outputs, the file declares "
                             f"{len(op.outputs)}")  # fmt: skip
        for t, value in zip(op.outputs, outputs, strict=True):
            declared = g.tensors[t]
            if np.size(value) != declared.size:
                raise ModelError(f"{where}: output '{declared.name}' is declared "
                                 f"{list(declared.shape)}, the op made {list(np.shape(value))}")  # fmt: skip
            write_tensor(res, t, value)
            stats.uploads += 1
