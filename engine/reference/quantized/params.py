"""Reading quantization parameters off IR tensors, with the checks LiteRT's Prepare makes."""

from __future__ import annotations

import numpy as np

from engine.errors import ModelError
from engine.model.ir import Tensor


def per_tensor(t: Tensor) -> tuple[np.float32, int]:
    """(scale, zero point) of an activation: one pair for the whole tensor."""
    q = t.quantization
    if q is None:
        raise ModelError(f"tensor {t.name!r} ({t.dtype}) has no quantization parameters")
    if len(q.scale) != 1:
        raise ModelError(
            f"tensor {t.name!r} has {len(q.scale)} scales; activations need one (per tensor)"
        )
    return np.float32(q.scale[0]), int(q.zero_point[0])


def channel_scales(t: Tensor, channels: int) -> np.ndarray:
    """float32 scale per output channel of a weight tensor (one scale broadcast)."""
    q = t.quantization
    if q is None:
        raise ModelError(f"weights {t.name!r} ({t.dtype}) have no quantization parameters")
    scale = np.asarray(q.scale, np.float32)
    if scale.size not in (1, channels):
        raise ModelError(f"weights {t.name!r}: {scale.size} scales for {channels} channels")
    if any(z != 0 for z in q.zero_point):
        raise ModelError(f"weights {t.name!r}: nonzero zero point (weights are symmetric)")
    return np.broadcast_to(scale, (channels,)).copy()


def same_grid(a: Tensor, b: Tensor) -> bool:
    """Both tensors have the same per-tensor scale and zero point."""
    return per_tensor(a) == per_tensor(b)


def dequantize(q: np.ndarray, t: Tensor) -> np.ndarray:
    """float32 real values of integer data (per tensor or per channel along the axis)."""
    p = t.quantization
    shape = [1] * q.ndim
    if len(p.scale) > 1:
        shape[p.axis] = len(p.scale)
    scale = np.asarray(p.scale, np.float32).astype(np.float64).reshape(shape)
    zero = np.asarray(p.zero_point, np.int64).reshape(shape)
    # DEQUANTIZE computes in double and rounds once to float (reference_ops::Dequantize).
    return (scale * (q.astype(np.int64) - zero)).astype(np.float32)
