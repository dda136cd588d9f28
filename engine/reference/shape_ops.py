"""Shape arithmetic and broadcasting data movement: SHAPE, PACK, GATHER, EXPAND_DIMS,
SQUEEZE, TILE. Exact in every dtype (a model with a dynamic batch computes its reshape
targets with these on int32 tensors; engine/transforms/fold_shapes.py folds them at load).
Semantics from tensorflow/lite/kernels/{shape,pack,gather,expand_dims,squeeze,tile}.cc.
"""

from __future__ import annotations

import numpy as np

from engine.errors import ModelError
from engine.model import schema
from engine.model.ir import Op
from engine.reference.registry import const_ints, register


@register("SHAPE")
def shape(op: Op, inputs: list) -> list:
    """The input's shape as a 1-D int32 (or out_type int64) tensor."""
    dtype = schema.TENSOR_DTYPES.get(int(op.attrs.get("out_type", 2)), "int32")
    return [np.array(inputs[0].shape, dtype=dtype)]


@register("PACK")
def pack(op: Op, inputs: list) -> list:
    """Stack N same-shaped tensors along a new axis (values_count = N)."""
    values = [t for t in inputs if t is not None]
    axis = int(op.attrs.get("axis", 0))
    try:
        return [np.stack(values, axis=axis)]
    except (ValueError, np.exceptions.AxisError) as exc:
        raise ModelError(f"PACK: {exc}") from None


@register("GATHER")
def gather(op: Op, inputs: list) -> list:
    """params.take(indices, axis); batch_dims 0 only; an index out of range is an error."""
    params, indices = inputs[0], np.asarray(inputs[1])
    if int(op.attrs.get("batch_dims", 0)) != 0:
        raise ModelError("GATHER: batch_dims != 0 is not supported")
    axis = int(op.attrs.get("axis", 0))
    axis = axis + params.ndim if axis < 0 else axis
    if not 0 <= axis < params.ndim:
        raise ModelError(f"GATHER: axis {axis} out of range for {params.shape}")
    n = params.shape[axis]
    if indices.size and (indices.min() < 0 or indices.max() >= n):
        raise ModelError(f"GATHER: index out of range [0, {n}) in {indices.reshape(-1)[:8]}")
    return [np.take(params, indices.astype(np.int64), axis=axis)]


@register("EXPAND_DIMS")
def expand_dims(op: Op, inputs: list) -> list:
    """Insert a size-1 axis at input 1 (negative counts from the end of the new rank)."""
    x = inputs[0]
    axis = const_ints(inputs[1], "axis", op)[0]
    if not -x.ndim - 1 <= axis <= x.ndim:
        raise ModelError(f"EXPAND_DIMS: axis {axis} out of range for rank {x.ndim}")
    return [np.expand_dims(x, axis)]


@register("SQUEEZE")
def squeeze(op: Op, inputs: list) -> list:
    """Drop the size-1 axes in squeeze_dims (all size-1 axes when empty)."""
    x = inputs[0]
    dims = [int(d) % x.ndim for d in op.attrs.get("squeeze_dims", ()) or ()] if x.ndim else []
    if not dims:
        dims = [d for d, n in enumerate(x.shape) if n == 1]
    if any(x.shape[d] != 1 for d in dims):
        raise ModelError(f"SQUEEZE: axes {dims} of {x.shape} are not all size 1")
    return [np.squeeze(x, axis=tuple(dims)) if dims else x]


@register("TILE")
def tile(op: Op, inputs: list) -> list:
    """Repeat the whole tensor multiples[i] times along axis i."""
    x = inputs[0]
    reps = const_ints(inputs[1], "multiples", op)
    if len(reps) != x.ndim or any(r < 0 for r in reps):
        raise ModelError(f"TILE: multiples {reps} do not fit a rank-{x.ndim} input")
    return [np.tile(x, reps)]
