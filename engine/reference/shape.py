"""Data movement: PAD, PADV2, RESHAPE, CONCATENATION, SPLIT, SLICE, STRIDED_SLICE,
DEPTH_TO_SPACE, SPACE_TO_DEPTH, TRANSPOSE. No arithmetic, so float32/float64 agree exactly."""

from __future__ import annotations

import numpy as np

from engine.errors import ModelError
from engine.model.ir import Op
from engine.reference.registry import const_ints, fused_activation, register


@register("PAD", "PADV2")
def pad(op: Op, inputs: list) -> list:
    """Constant padding; paddings is [rank, 2] (before, after); PADV2 takes the value as input 2."""
    x = inputs[0]
    p = const_ints(inputs[1], "paddings", op)
    if len(p) != 2 * x.ndim:
        raise ModelError(f"{op.type}: paddings {p} do not fit a rank-{x.ndim} input")
    value = 0
    if op.type == "PADV2" and len(inputs) > 2 and inputs[2] is not None:
        value = np.asarray(inputs[2]).reshape(-1)[0]
    pairs = [(p[2 * i], p[2 * i + 1]) for i in range(x.ndim)]
    return [np.pad(x, pairs, constant_values=value)]


def _reshape_target(op: Op, inputs: list) -> list[int]:
    # tensorflow/lite/kernels/reshape.cc: a 1-D int32 shape input wins over new_shape.
    if len(inputs) > 1 and inputs[1] is not None and np.ndim(inputs[1]) == 1:
        return const_ints(inputs[1], "shape", op)
    if "new_shape" in op.attrs:
        shape = [int(v) for v in op.attrs["new_shape"]]
        # Legacy converters wrote new_shape [0] for a scalar.
        return [] if shape == [0] else shape
    raise ModelError("RESHAPE: no shape input and no new_shape attribute")


@register("RESHAPE")
def reshape(op: Op, inputs: list) -> list:
    """Reshape to the target shape; one -1 entry is inferred."""
    x, shape = inputs[0], _reshape_target(op, inputs)
    try:
        return [x.reshape(shape)]
    except ValueError:
        raise ModelError(f"RESHAPE: cannot reshape {x.shape} into {shape}") from None


@register("CONCATENATION")
def concatenation(op: Op, inputs: list) -> list:
    axis = int(op.attrs.get("axis", 0))
    return [fused_activation(np.concatenate([t for t in inputs if t is not None], axis=axis), op)]


@register("SPLIT")
def split(op: Op, inputs: list) -> list:
    """Inputs: axis (scalar), data; num_splits equal parts."""
    axis = const_ints(inputs[0], "axis", op)[0]
    x, n = inputs[1], int(op.attrs["num_splits"])
    if x.shape[axis] % n:
        raise ModelError(f"SPLIT: axis {axis} of {x.shape} does not split into {n} parts")
    return list(np.split(x, n, axis=axis))


@register("SLICE")
def slice_(op: Op, inputs: list) -> list:
    """Inputs: data, begin, size (size -1 = up to the end)."""
    x = inputs[0]
    begin, size = const_ints(inputs[1], "begin", op), const_ints(inputs[2], "size", op)
    idx = []
    for d, (b, s) in enumerate(zip(begin, size, strict=True)):
        e = x.shape[d] if s == -1 else b + s
        if not 0 <= b <= e <= x.shape[d]:
            raise ModelError(f"SLICE: begin {begin} size {size} out of bounds for {x.shape}")
        idx.append(slice(b, e))
    return [x[tuple(idx)]]


def _bit(mask: int, i: int) -> bool:
    return bool((mask >> i) & 1)


@register("STRIDED_SLICE")
def strided_slice(op: Op, inputs: list) -> list:
    """TF strided-slice semantics, turned into a numpy index.

    Each spec entry i is one of: ellipsis (covers the axes no other entry names),
    new axis (inserts a size-1 axis), shrink (picks index begin[i], drops the axis),
    or a slice begin:end:stride where begin_mask/end_mask bits mean "from the start" /
    "to the end". Numpy clamps out-of-range slice bounds exactly as TF does.
    `offset` makes end relative: end = begin + end.
    """
    x = inputs[0]
    begin = const_ints(inputs[1], "begin", op)
    end = const_ints(inputs[2], "end", op)
    strides = const_ints(inputs[3], "strides", op) if len(inputs) > 3 else [1] * len(begin)
    a = op.attrs
    bm, em, shm = (
        int(a.get("begin_mask", 0)),
        int(a.get("end_mask", 0)),
        int(a.get("shrink_axis_mask", 0)),
    )
    elm, nam = int(a.get("ellipsis_mask", 0)), int(a.get("new_axis_mask", 0))
    offset = bool(a.get("offset", False))
    n = len(begin)
    ell = [i for i in range(n) if _bit(elm, i)]
    if len(ell) > 1:
        raise ModelError("STRIDED_SLICE: more than one ellipsis")
    named = sum(1 for i in range(n) if not _bit(elm, i) and not _bit(nam, i))
    if named > x.ndim:
        raise ModelError(f"STRIDED_SLICE: {named} indexed axes for a rank-{x.ndim} input")
    idx: list = []
    axis = 0
    for i in range(n):
        if _bit(elm, i):
            idx.append(Ellipsis)
            axis += x.ndim - named
        elif _bit(nam, i):
            idx.append(None)
        else:
            dim, s = x.shape[axis], strides[i]
            if s == 0:
                raise ModelError("STRIDED_SLICE: stride 0")
            if _bit(shm, i):
                b = (0 if s > 0 else dim - 1) if _bit(bm, i) else begin[i]
                if not -dim <= b < dim:
                    raise ModelError(f"STRIDED_SLICE: index {b} out of range for axis {axis}")
                idx.append(b)
            else:
                b = None if _bit(bm, i) else begin[i]
                e = None if _bit(em, i) else (begin[i] + end[i] if offset else end[i])
                idx.append(slice(b, e, s))
            axis += 1
    return [np.array(x[tuple(idx)])]  # a copy; 0-d stays 0-d (ascontiguousarray makes it 1-d)


@register("DEPTH_TO_SPACE")
def depth_to_space(op: Op, inputs: list) -> list:
    """out[n, h*b + i, w*b + j, c] = in[n, h, w, (i*b + j) * C_out + c]."""
    x, b = inputs[0], int(op.attrs["block_size"])
    n, h, w, c = x.shape
    if c % (b * b):
        raise ModelError(f"DEPTH_TO_SPACE: {c} channels not divisible by {b}x{b}")
    y = x.reshape(n, h, w, b, b, c // (b * b)).transpose(0, 1, 3, 2, 4, 5)
    return [y.reshape(n, h * b, w * b, c // (b * b))]


@register("SPACE_TO_DEPTH")
def space_to_depth(op: Op, inputs: list) -> list:
    """Inverse of DEPTH_TO_SPACE."""
    x, b = inputs[0], int(op.attrs["block_size"])
    n, h, w, c = x.shape
    if h % b or w % b:
        raise ModelError(f"SPACE_TO_DEPTH: {h}x{w} not divisible by block {b}")
    y = x.reshape(n, h // b, b, w // b, b, c).transpose(0, 1, 3, 2, 4, 5)
    return [y.reshape(n, h // b, w // b, b * b * c)]


@register("TRANSPOSE")
def transpose(op: Op, inputs: list) -> list:
    perm = const_ints(inputs[1], "perm", op)
    return [np.transpose(inputs[0], perm).copy()]
