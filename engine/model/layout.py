"""PHWC4 layout: how any tensor shape maps onto the (B, H, W, C) the GPU engine stores.

One mapping, shared by the planner and the GPU engine:
- rank 0 ``[]``      -> ``(1, 1, 1, 1)``
- rank 1 ``[N]``     -> ``(1, 1, 1, N)``
- rank 2 ``[A, B]``  -> ``(1, 1, A, B)``
- rank 3 ``[A,B,C]`` -> ``(1, A, B, C)``
- rank 4 ``[B,H,W,C]`` as is; rank > 4 is a ModelError.
(left-pad with 1s: the last dimension is always the channel one.)

Storage of a (B, H, W, C) tensor:
- buffer: ``S = ceil(C/4)`` slices of B*H*W vec4, zero padded -> B*H*W*S*4 elements;
- texture (2-D array): width = W, height = H*B (batch stacks rows), layers = S.
"""

from __future__ import annotations

from collections.abc import Sequence

from engine.errors import ModelError


def phwc4_shape(shape: Sequence[int]) -> tuple[int, int, int, int]:
    """The (B, H, W, C) a tensor of `shape` is stored as (see the module docstring)."""
    dims = tuple(int(d) for d in shape)
    if len(dims) > 4:
        raise ModelError(f"shape {list(dims)}: rank {len(dims)} > 4 has no PHWC4 mapping")
    if any(d < 0 for d in dims):
        raise ModelError(f"shape {list(dims)}: negative (dynamic) dimension, resolve it first")
    b, h, w, c = (1,) * (4 - len(dims)) + dims
    return b, h, w, c


def slices(channels: int) -> int:
    """Number of vec4 slices holding `channels` channels: ceil(C/4)."""
    return (channels + 3) // 4


def phwc4_bytes(shape: Sequence[int], bytes_per_element: int = 4) -> int:
    """Bytes of the PHWC4 buffer for `shape` (channels padded to a multiple of 4)."""
    b, h, w, c = phwc4_shape(shape)
    return b * h * w * slices(c) * 4 * bytes_per_element


def texture_extent(shape: Sequence[int]) -> tuple[int, int, int]:
    """(width, height, layers) of the 2-D array texture for `shape`: (W, H*B, ceil(C/4))."""
    b, h, w, c = phwc4_shape(shape)
    return w, h * b, slices(c)
