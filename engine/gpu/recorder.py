"""Recording prepared dispatches into a compute pass: wgpu-native's three calls made
directly, 3.5x faster than through wgpu-py's methods.

wgpu-py wraps every pass call in Python: argument handling, a `uint32_t[]` allocated for
set_bind_group's (empty) dynamic offsets, and an error-capture context around the C call.
That is 2.7 µs a dispatch on this project's CPUs (0.8 µs direct) and 5-10 µs on the H100
host: on small models as long as the GPU's own work, and paid on every frame. The direct
calls lose no validation error: wgpu-native checks a pass's commands when its encoder
finishes (`wgpuCommandEncoderFinish`, still called through wgpu-py, which raises them),
as tests/gpu/test_recorder.py checks with a bind group that does not fit its pipeline.
Only an error wgpu-native reported during one of the three calls themselves (misuse of
the pass's state, such as recording into an ended pass) would be logged by wgpu-py's
error handler instead of raised there.

It needs wgpu-py's wgpu-native function table (`lib`) and each object's native handle
(`_internal`); when either is missing (another wgpu-py, another backend), record() goes
through wgpu-py's methods instead: slower, the same commands.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache


@cache
def direct_functions():
    """wgpu-native's (set_pipeline, set_bind_group, dispatch, NULL), or None."""
    try:
        from wgpu.backends.wgpu_native._ffi import ffi, lib

        return (
            lib.wgpuComputePassEncoderSetPipeline,
            lib.wgpuComputePassEncoderSetBindGroup,
            lib.wgpuComputePassEncoderDispatchWorkgroups,
            ffi.NULL,
        )
    except (ImportError, AttributeError):
        return None


def native_handles(pipeline, group) -> tuple | None:
    """The native (pipeline, bind group) handles, or None if wgpu-py keeps none."""
    handles = (getattr(pipeline, "_internal", None), getattr(group, "_internal", None))
    return None if None in handles else handles


def record(pass_, dispatches: Iterable, stats, direct: bool = True) -> None:
    """Record `dispatches` (resources.Prepared) into `pass_`; count them in stats.
    `direct=False`: through wgpu-py's methods (benchmarks.engine.submit_sweep compares)."""
    functions = direct_functions() if direct else None
    handle = getattr(pass_, "_internal", None)
    usable = functions is not None and handle is not None
    if usable:
        set_pipeline, set_bind_group, dispatch, null = functions
    count = 0
    for d in dispatches:
        native = d.native if usable else None
        if native is None:
            pass_.set_pipeline(d.pipeline)
            pass_.set_bind_group(0, d.group)
            pass_.dispatch_workgroups(*d.grid)
        else:
            set_pipeline(handle, native[0])
            set_bind_group(handle, 0, native[1], 0, null)
            dispatch(handle, *d.grid)
        count += 1
    stats.dispatches += count


@cache
def direct_indirect():
    """wgpu-native's DispatchWorkgroupsIndirect, or None."""
    try:
        from wgpu.backends.wgpu_native._ffi import lib

        return lib.wgpuComputePassEncoderDispatchWorkgroupsIndirect
    except (ImportError, AttributeError):
        return None


def record_indirect(pass_, dispatches: Iterable, args, stride: int, stats) -> None:
    """Record `dispatches`, dispatch i's work group count read from `args` at i * stride
    (engine/gpu/gate.py writes it); the same direct calls as record() where it can."""
    functions, indirect = direct_functions(), direct_indirect()
    handle = getattr(pass_, "_internal", None)
    buffer = getattr(args, "_internal", None)
    usable = None not in (functions, indirect, handle, buffer)
    count = 0
    for i, d in enumerate(dispatches):
        native = d.native if usable else None
        if native is None:
            pass_.set_pipeline(d.pipeline)
            pass_.set_bind_group(0, d.group)
            pass_.dispatch_workgroups_indirect(args, i * stride)
        else:
            set_pipeline, set_bind_group, _, null = functions
            set_pipeline(handle, native[0])
            set_bind_group(handle, 0, native[1], 0, null)
            indirect(handle, buffer, i * stride)
        count += 1
    stats.dispatches += count
