"""Load-time check that every tensor the GPU program touches can be stored.

The engine keeps every non-constant tensor (graph inputs, outputs, intermediates, CPU
fallback results alike) in PHWC4 float storage, so each must be:
- a float tensor (float32; float16 in the file is stored at the engine's precision);
- of rank <= 4 with fixed dimensions (engine/model/layout.py).
Anything else is a ModelError naming the file, the op (index, type), the tensor and
why, raised before a kernel sees it (a kernel's own shape code would fail deep inside,
naming nothing).
"""

from __future__ import annotations

from engine.errors import ModelError
from engine.model.ir import Graph, Tensor, tensors_read

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
