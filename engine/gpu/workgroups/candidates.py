"""The candidate set: every (work group size, work shape) pair worth considering.

For each work shape the kernel supports (those that fit inside the problem
space; all of them when none fits):
- each axis of the work group is a power of two, at most the device's axis
  limit and at most what covers that axis once (no work group wider than the
  grid it tiles: pow2_ceil(ceil(space / work)));
- the total is a power of two from MIN_INVOCATIONS (or the whole grid, when it
  is smaller) to MAX_INVOCATIONS (or the device limit, when lower);
- the dispatch grid fits the device's work groups per dimension.
Order: work shapes in the kernel's order, then x, y, z ascending (deterministic).
"""

from __future__ import annotations

from math import prod

from engine.gpu.workgroups.limits import DeviceLimits
from engine.gpu.workgroups.spec import Candidate, KernelSignature, Triple, WorkShape, ceil_div

# 8: lavapipe's SIMD width at 256 bits and the smallest group the conv1x1 kernel
# used; 256: WebGPU's default invocation limit, portable, and larger groups only
# shrink the grid for these kernels (it also keeps exhaustive tuning short).
MIN_INVOCATIONS = 8
MAX_INVOCATIONS = 256


def pow2_floor(n: int) -> int:
    """The largest power of two <= n (n >= 1)."""
    return 1 << (n.bit_length() - 1)


def pow2_ceil(n: int) -> int:
    """The smallest power of two >= n (n >= 1)."""
    return 1 << (n - 1).bit_length()


def max_invocations(limits: DeviceLimits) -> int:
    """The largest work group size the candidate set uses on this device."""
    return pow2_floor(min(limits.max_invocations, MAX_INVOCATIONS))


def axis_caps(space: Triple, work: WorkShape, limits: DeviceLimits) -> Triple:
    """Per axis, the largest work group extent worth using with `work`."""
    w = work.as_tuple()
    caps = [
        min(pow2_ceil(ceil_div(n, b)), pow2_floor(m))
        for n, b, m in zip(space, w, limits.max_size, strict=True)
    ]
    return (caps[0], caps[1], caps[2])


def usable_work(sig: KernelSignature) -> tuple[WorkShape, ...]:
    """The kernel's work shapes that fit in its space (all of them when none does)."""
    fits = tuple(
        w for w in sig.work if all(b <= n for b, n in zip(w.as_tuple(), sig.space, strict=True))
    )
    return fits or sig.work


def _pow2s(cap: int) -> list[int]:
    return [1 << i for i in range(cap.bit_length())]


def candidates(sig: KernelSignature, limits: DeviceLimits) -> list[Candidate]:
    """All valid candidates, in a deterministic order; ValueError when there are none."""
    top = max_invocations(limits)
    out = []
    for work in usable_work(sig):
        caps = axis_caps(sig.space, work, limits)
        lo = min(MIN_INVOCATIONS, top, prod(caps))
        for gx in _pow2s(caps[0]):
            for gy in _pow2s(caps[1]):
                for gz in _pow2s(caps[2]):
                    c = Candidate((gx, gy, gz), work)
                    if lo <= c.size <= top and max(c.groups(sig.space)) <= limits.max_groups:
                        out.append(c)
    if not out:
        raise ValueError(f"{sig.key()}: no work group covers space {sig.space} within {limits}")
    return out


def within_limits(c: Candidate, sig: KernelSignature, limits: DeviceLimits) -> bool:
    """Whether the device can dispatch `c` over the signature's space."""
    return (
        c.size <= limits.max_invocations
        and all(g <= m for g, m in zip(c.workgroup, limits.max_size, strict=True))
        and max(c.groups(sig.space)) <= limits.max_groups
        and c.work in sig.work
    )
