"""Heuristic rules I-V: each says whether a candidate is good in one respect.

A rule is `rule(candidate, ctx) -> bool`; `ctx` carries the signature, the
limits and what some rules compare against (the least padding any candidate
achieves). The heuristic picks the candidate passing the most rules.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from math import prod

from engine.gpu.workgroups.candidates import axis_caps, candidates, max_invocations
from engine.gpu.workgroups.limits import DeviceLimits
from engine.gpu.workgroups.spec import Candidate, KernelSignature

CACHE_LINE = 64  # bytes: the line on ARM Mali/Adreno and x86; two of NVIDIA's 32 B sectors
# Padding within 1/16 of the space of the least-padded candidate counts as minimal, so
# that one odd axis does not leave only tiny work groups passing rule IV.
PAD_SLACK = 1 / 16
# Conv: a work group covering P output pixels and Z output slices loads ~P input
# vectors and ~2Z weight blocks per input slice; for a given P*Z that is least when
# P ~ 2Z (the w_x*w_y ~ 2*w_z). Passing: P/Z within a factor 2 of it.
CONV_PIXELS_PER_SLICE = 2


@dataclass(frozen=True)
class Context:
    """What the rules read besides the candidate."""

    sig: KernelSignature
    limits: DeviceLimits
    min_waste: float

    @classmethod
    def of(
        cls, sig: KernelSignature, limits: DeviceLimits, pool: list[Candidate] | None = None
    ) -> Context:
        pool = candidates(sig, limits) if pool is None else pool
        return cls(sig, limits, min(c.waste(sig.space) for c in pool))


def full_waves(c: Candidate, ctx: Context) -> bool:
    """I: the number of work groups is a multiple of the parallel units (when known),
    so the last wave keeps every unit busy."""
    units = ctx.limits.parallel_units
    return units is None or prod(c.groups(ctx.sig.space)) % units == 0


def whole_subgroups(c: Candidate, ctx: Context) -> bool:
    """II: the work group size is a multiple of the (largest) subgroup size, so no
    subgroup runs partly empty."""
    return c.size % ctx.limits.subgroup_max == 0


def cache_lines(c: Candidate, ctx: Context) -> bool:
    """III: along x, the work group loads whole 64-byte cache lines."""
    return (c.workgroup[0] * c.work.x * ctx.sig.bytes_x) % CACHE_LINE == 0


def min_padding(c: Candidate, ctx: Context) -> bool:
    """IV: the grid covers the space with (near) the least padding of any candidate."""
    return c.waste(ctx.sig.space) <= ctx.min_waste + PAD_SLACK


def min_loads(c: Candidate, ctx: Context) -> bool:
    """V: little data loaded per work group for what it computes (by kernel kind).

    conv: the covered block has P pixels ~ 2 x Z slices (within a factor 2);
    depthwise: one slice deep, and as many pixels (w_x * w_y) as the limits allow;
    other kinds load what they write: always true."""
    px, py, pz = c.covered
    if ctx.sig.kind == "conv":
        ratio = px * py / (pz * CONV_PIXELS_PER_SLICE)
        return 0.5 <= ratio <= 2
    if ctx.sig.kind == "depthwise":
        cx, cy, _ = axis_caps(ctx.sig.space, c.work, ctx.limits)
        plane = min(max_invocations(ctx.limits), cx * cy)
        return pz == 1 and c.workgroup[0] * c.workgroup[1] == plane
    return True


Rule = Callable[[Candidate, Context], bool]
RULES: tuple[tuple[str, Rule], ...] = (
    ("I", full_waves),
    ("II", whole_subgroups),
    ("III", cache_lines),
    ("IV", min_padding),
    ("V", min_loads),
)


def passed(c: Candidate, ctx: Context) -> tuple[str, ...]:
    """Names of the rules `c` passes."""
    return tuple(name for name, rule in RULES if rule(c, ctx))
