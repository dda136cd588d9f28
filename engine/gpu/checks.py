"""Load-time checks that the GPU program fits: every tensor storable, every buffer,
binding and dispatch within the adapter's limits. Both run at compile, GPU-free, before
anything is allocated.

`check_storable`: the engine keeps every non-constant tensor (graph inputs, outputs,
intermediates, CPU fallback results alike) in PHWC4 float storage, so each must be:
- a float tensor (float32; float16 in the file is stored at the engine's precision);
- of rank <= 4 with fixed dimensions (engine/model/layout.py), and not empty.

`check_bindings`: a kernel binds tensors as GPU storage; a constant has none (its data goes
into the kernel's packed constants), so an op reading a constant where its kernel expects
a computed tensor (an op of constants only, which TFLite would fold at prepare) is refused.

`check_device_limits`: a file can ask for more than the device has (a corrupt dimension
asks for a 100 GB buffer); wgpu would refuse at allocation with a validation error naming
nothing. Checked against the adapter's limits:
- every buffer-stored tensor and graph I/O staging buffer <= max-storage-buffer-binding-size;
- the intermediates' arena or shared objects <= max-buffer-size;
- every dispatch's constants <= the binding limit of their address space (storage or
  uniform), its work group count <= max-compute-workgroups-per-dimension.
Anything else is a ModelError naming the file, the op (index, type), the tensor and
why, raised before a kernel sees it (a kernel's own shape code would fail deep inside,
naming nothing).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from engine.errors import ModelError
from engine.gpu.kernels.base import FIXED_DTYPES
from engine.model.ir import Graph, Tensor, tensors_read
from engine.model.layout import phwc4_bytes
from engine.precision import precision

STORED_DTYPES = ("float32", "float16")


def why_not_storable(tensor: Tensor) -> str | None:
    """Why the GPU cannot hold `tensor`, or None when it can."""
    where = f"tensor {tensor.name!r} {list(tensor.shape)}"
    if tensor.dtype not in STORED_DTYPES:
        return (
            f"{where} is {tensor.dtype}; the GPU stores float tensors only (integer shape "
            "arithmetic folds at load once every shape is fixed: the fold_shapes transform, "
            "skipped with transforms=False)"
        )
    if len(tensor.shape) > 4:
        return (
            f"{where} has rank {len(tensor.shape)}; the GPU stores rank <= 4 (PHWC4) and no "
            "transform collapsed it (collapse_upsample turns nearest upsampling and tiles "
            "into rank-4 ops; ENGINE_DEBUG=1 prints why it declined)"
        )
    if any(d < 0 for d in tensor.shape):
        return f"{where} has a dynamic dimension; give Engine(..., input_shapes={{...}})"
    if math.prod(tensor.shape) == 0:
        return f"{where} has no elements"
    return None


def check_storable(graph: Graph) -> None:
    """Raise ModelError for the first op reading or writing a tensor the GPU cannot hold."""
    name = graph.name or "<graph>"
    for i, op in enumerate(graph.ops):
        for t in [*tensors_read(op), *op.outputs]:
            tensor = graph.tensors[t]
            why = None if tensor.is_constant else why_not_storable(tensor)
            if why:
                raise ModelError(f"{name}: op #{i} {op.type}: {why}")
    for t in [*graph.inputs, *graph.outputs]:
        why = why_not_storable(graph.tensors[t])
        if why:
            raise ModelError(f"{name}: graph input/output: {why}")


@dataclass(frozen=True)
class BufferLimits:
    """Buffer limits of a device; the defaults are WebGPU's guaranteed minimums."""

    max_buffer_bytes: int = 256 << 20  # max-buffer-size
    max_binding_bytes: int = 128 << 20  # max-storage-buffer-binding-size
    max_uniform_bytes: int = 64 << 10  # max-uniform-buffer-binding-size
    max_groups: int = 65535  # max-compute-workgroups-per-dimension


def check_bindings(graph: Graph, program) -> None:
    """ModelError for the first dispatch binding a constant tensor as storage."""
    name = graph.name or "<graph>"
    for step in program.steps:
        for d in getattr(step, "dispatches", ()):
            for b in d.bindings:
                if b.role != "const" and 0 <= b.tensor < len(graph.tensors):
                    tensor = graph.tensors[b.tensor]
                    if tensor.is_constant:
                        op = graph.ops[step.op_index]
                        raise ModelError(
                            f"{name}: op #{step.op_index} {op.type}: kernel {d.kernel} reads "
                            f"constant {tensor.name!r} {list(tensor.shape)} as a computed "
                            "tensor (an op of constants only); the engine cannot run it"
                        )


def check_device_limits(graph: Graph, program, limits: BufferLimits) -> None:
    """ModelError for the first tensor, buffer or dispatch of `program` (a compile.Program
    of `graph`) over the device's limits (see the module docstring)."""
    name = graph.name or "<graph>"
    elem = precision(program.options.precision).element_bytes
    textures = program.textures

    def over(what: str, size: int, limit: int, limit_name: str) -> ModelError:
        return ModelError(f"{name}: {what} needs {size:,} bytes, over this adapter's "
                          f"{limit_name} of {limit:,}")  # fmt: skip

    for i, op in enumerate(graph.ops):
        for t in [*tensors_read(op), *op.outputs]:
            tensor = graph.tensors[t]
            if tensor.is_constant or t in textures:
                continue
            size = phwc4_bytes(tensor.shape, elem)
            if size > limits.max_binding_bytes:
                what = f"op #{i} {op.type}: tensor {tensor.name!r} {list(tensor.shape)}"
                raise over(what, size, limits.max_binding_bytes, "max-storage-buffer-binding-size")
    for t in [*graph.inputs, *graph.outputs]:
        tensor = graph.tensors[t]
        size = max(phwc4_bytes(tensor.shape, elem), math.prod(tensor.shape) * 4)
        if size > limits.max_binding_bytes:
            what = f"graph input/output {tensor.name!r} {list(tensor.shape)}"
            raise over(what, size, limits.max_binding_bytes, "max-storage-buffer-binding-size")
    plan = program.plans.buffers.plan
    sizes = [getattr(plan, "size", 0), *getattr(plan, "object_sizes", ())]
    if max(sizes, default=0) > limits.max_buffer_bytes:
        what = f"the intermediate tensors' memory ({program.plans.buffers.strategy})"
        raise over(what, max(sizes), limits.max_buffer_bytes, "max-buffer-size")
    steps = [(s.op_index, d) for s in program.steps for d in getattr(s, "dispatches", ())]
    for i, d in steps:
        where = f"op #{i} {graph.ops[i].type}"
        if max(d.workgroups) > limits.max_groups:
            raise ModelError(
                f"{name}: {where}: kernel {d.kernel} needs {list(d.workgroups)} work groups, "
                f"over this adapter's max-compute-workgroups-per-dimension of {limits.max_groups}"
            )
        for b in d.bindings:
            if b.role != "const" or b.data is None:
                continue
            size = b.data.size * (4 if b.dtype in FIXED_DTYPES else elem)
            uniform = b.space == "uniform"
            limit = limits.max_uniform_bytes if uniform else limits.max_binding_bytes
            if size > limit:
                kind = "uniform" if uniform else "storage"
                raise over(f"{where}: kernel {d.kernel}'s constants", size, limit,
                           f"max-{kind}-buffer-binding-size")  # fmt: skip
