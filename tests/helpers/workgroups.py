"""Signatures and limits shared by the work group tests."""

from __future__ import annotations

import math

from engine.gpu.workgroups import Candidate, DeviceLimits, KernelSignature, WorkShape

CONV_WORK = (WorkShape(4, 1, 4), WorkShape(2, 1, 2), WorkShape(4, 1, 1), WorkShape(1, 1, 1))
DW_WORK = (WorkShape(2, 4, 1), WorkShape(2, 2, 1), WorkShape(1, 1, 1))
ONE = (WorkShape(1, 1, 1),)
WIDE = DeviceLimits(max_invocations=1024, max_size=(1024, 1024, 1024), parallel_units=4)


def conv(space=(32, 32, 8), work=CONV_WORK) -> KernelSignature:
    return KernelSignature("conv2d", space, "conv", 16, work, (("k", 3), ("s", 1)))


def depthwise(space=(64, 64, 8), work=DW_WORK) -> KernelSignature:
    return KernelSignature("depthwise_tiled", space, "depthwise", 16, work)


def log_axes(c: Candidate) -> tuple[int, ...]:
    return tuple(int(math.log2(v)) for v in (*c.workgroup, *c.work.as_tuple()))


class CountingTimer:
    """A deterministic fake device: `cost(candidate)` ms, counting calls."""

    def __init__(self, cost):
        self.cost = cost
        self.calls = 0

    def __call__(self, c: Candidate) -> float:
        self.calls += 1
        return self.cost(c)


def scrambled(c: Candidate) -> float:
    """A deterministic, irregular landscape (no structure for descent to exploit)."""
    a = (*c.workgroup, *c.work.as_tuple())
    return 1.0 + (sum(v * p for v, p in zip(a, (7, 13, 29, 3, 5, 11), strict=True)) % 97) / 10
