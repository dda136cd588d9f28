"""Helpers shared by kernels: constants packed as PHWC4, uniform weight blocks, split
dispatches, work group shapes. (No kernel is registered here.)"""

from __future__ import annotations

import numpy as np

from engine.gpu.kernels.base import Binding, BuildContext
from engine.model.layout import phwc4_shape

# Uniform weights read 3-4x faster than storage on lavapipe, but each extra dispatch
# costs ~0.1 ms and a small dispatch leaves threads idle. The generic conv caps its
# uniform blocks at MAX_SPLITS and reads storage weights in one dispatch beyond that
# (face_landmark's 3x3x32 -> 1404 head: 26 dispatches 3.8 ms -> 1 dispatch 1.4 ms).
# The 1x1 and depthwise kernels do not: their split layers have many pixels, and
# hand_landmark_full ran 70 ms with 196 dispatches vs 83 ms with 72 (storage weights).
MAX_SPLITS = 4


def pow2_ceil(n: int, cap: int) -> int:
    """The smallest power of two >= min(n, cap)."""
    p = 1
    while p < min(n, cap):
        p *= 2
    return p


def uniform_groups(
    n_slices: int, per_slice: int, ctx: BuildContext, max_splits: int | None = None
) -> tuple[str, int]:
    """(address space, output slices per dispatch) so that each dispatch's weights fit
    one uniform binding; storage (one dispatch) when not even one slice fits, or when
    the layer would need more than `max_splits` dispatches."""
    if per_slice > ctx.max_uniform_bytes:
        return "storage, read", n_slices
    group = max(1, min(n_slices, ctx.max_uniform_bytes // per_slice))
    if max_splits is not None and -(-n_slices // group) > max_splits:
        return "storage, read", n_slices
    return "uniform", group


def pad_groups(a: np.ndarray, group: int) -> np.ndarray:
    """`a` zero padded along its first axis (output slices) to whole groups of `group`
    entries: every dispatch of a split layer that shares one pipeline binds `group` slices."""
    total = -(-len(a) // group) * group
    return np.concatenate([a, np.zeros((total - len(a), *a.shape[1:]), a.dtype)])


def part_of(first: int, count: int) -> Binding:
    """The (first slice, slice count) buffer of one dispatch of a shared-pipeline split."""
    data = np.array([first, count, 0, 0], np.float32)
    return Binding("const", data=data, space="storage", dtype="f32", name="part_of",
                   type="vec4<A>")  # fmt: skip


def weight_bindings(
    packed: np.ndarray,
    biases: np.ndarray,
    space: str,
    base: int,
    n: int,
    count: int | None = None,
    matrix: str = "mat4x4",
    prefix: str = "",
) -> tuple[Binding, ...]:
    """The bindings shaders/engine/weights.wgsl declares for one dispatch: output slices
    base..base+n of the packed weights (`<prefix>weights`: array<matrix<A>, N>, a mat4x4
    or vec4 per entry) and biases (`<prefix>bias`), in `space` ("uniform" or "storage,
    read"), then, when `count` is given (a split layer sharing one pipeline),
    part_of(base, count)."""
    kind = space.split(",")[0]
    weights = packed[base : base + n].reshape(-1)
    bias = biases[base : base + n].reshape(-1)
    per = 16 if matrix == "mat4x4" else 4
    return (
        Binding("const", data=weights, space=kind, dtype="f32", name=f"{prefix}weights",
                type=f"array<{matrix}<A>, {weights.size // per}>"),
        Binding("const", data=bias, space=kind, dtype="f32", name=f"{prefix}bias",
                type=f"array<vec4<A>, {bias.size // 4}>"),
        *([part_of(base, count)] if count is not None else []),
    )  # fmt: skip


def workgroup_for(nx: int, ny: int, nz: int) -> tuple[int, int, int]:
    """64 invocations over an (nx, ny, nz) grid: x first (lavapipe's 8-wide SIMD runs
    along x), then rows, then slices for small images. Lavapipe: (8, 8, 1) on large
    outputs, 1.4x faster than (4, 4, 1); on 8x8 outputs (2, 4, 8) 1.5x faster than (8, 8, 1)."""
    wx = pow2_ceil(nx, 8)
    wy = pow2_ceil(ny, 8)
    return wx, wy, pow2_ceil(nz, max(1, 64 // (wx * wy)))


def pack_phwc4(data: np.ndarray) -> np.ndarray:
    """A constant tensor as its PHWC4 buffer contents: float32 [S, rows, W, 4], zero padded."""
    b, h, w, c = phwc4_shape(data.shape)
    s = -(-c // 4)
    hwc = np.zeros((b * h, w, s * 4), np.float32)
    hwc[:, :, :c] = np.asarray(data, np.float32).reshape(b * h, w, c)
    return np.ascontiguousarray(hwc.reshape(b * h, w, s, 4).transpose(2, 0, 1, 3)).reshape(-1)


def optional_input(op, graph, index: int) -> np.ndarray | None:
    """The constant data of op input `index` (e.g. a conv bias), or None when omitted."""
    t = op.inputs[index] if len(op.inputs) > index else -1
    return graph.tensors[t].data if t >= 0 else None


def geometry(src, dst) -> dict:
    """Template variables of an input and output PHWC4 geometry (Shape4), shared by the
    windowed kernels: in_w, in_h, in_rows, in_plane (vec4 per slice), out_w, out_h, out_rows."""
    return {
        "in_w": src.w, "in_h": src.h, "in_rows": src.rows, "in_plane": src.rows * src.w,
        "out_w": dst.w, "out_h": dst.h, "out_rows": dst.rows,
    }  # fmt: skip
