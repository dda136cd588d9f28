"""Heuristic rules I-V: each says whether a candidate is good in one respect.

A rule is `rule(candidate, ctx) -> bool`; `ctx` carries the signature, the
limits and what some rules compare against (the least padding any candidate
achieves). The heuristic picks the candidate passing the most rules.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from math import prod

from engine.gpu.workgroups.candidates import candidates, usable_work
from engine.gpu.workgroups.limits import DeviceLimits
from engine.gpu.workgroups.spec import Candidate, KernelSignature, Triple, WorkShape, ceil_div

CACHE_LINE = 64  # bytes: the line on ARM Mali/Adreno and x86; two of NVIDIA's 32 B sectors
# Padding within 1/8 of the space of the least-padded candidate counts as minimal, so
# that one odd axis does not leave only tiny work groups passing rule IV (and 4 slices
# per invocation over 11 or 22 slices, 9 % padding, still passes).
PAD_SLACK = 1 / 8
# Rule I: at least this many waves when the space has enough work, so that a unit
# slowed by something else (lavapipe: a thread the OS preempts) delays one small group,
# not a quarter of the layer (conv1x1 7x7x112->672 on lavapipe: 0.44 ms in 4 groups,
# 0.30 ms in 16).
MIN_WAVES = 2
# Conv: an invocation computing P output pixels x Z output slices keeps P x Z vec4
# accumulators and, per input slice, loads P input vectors and Z 4x4 weight blocks;
# the w_x*w_y ~ 2*w_z. Passing: P/Z within a factor 2 of 2 (i.e. 1..4).
# (Per invocation, not per work group: these kernels share no workgroup memory, so a
# group's loads are its invocations' loads.)
CONV_PIXELS_PER_SLICE = 2
# Depthwise: a work group's covered plane of at least this many pixels (or all of it)
# shares its halo: a 3x3 footprint over 16x32 outputs loads 1.2 inputs per output,
# over 4x4 outputs 2.25.
DEPTHWISE_MIN_PLANE = 64


@dataclass(frozen=True)
class Context:
    """What the rules read besides the candidate."""

    sig: KernelSignature
    limits: DeviceLimits
    min_waste: float
    most_groups: int  # the largest grid any candidate has (rule I's "enough waves")
    conv_block: int  # P x Z of the kernel's preferred work shape (rule V)

    @classmethod
    def of(
        cls, sig: KernelSignature, limits: DeviceLimits, pool: list[Candidate] | None = None
    ) -> Context:
        pool = candidates(sig, limits) if pool is None else pool
        return cls(
            sig,
            limits,
            min(c.waste(sig.space) for c in pool),
            max(prod(c.groups(sig.space)) for c in pool),
            preferred_block(sig),
        )


def full_waves(c: Candidate, ctx: Context) -> bool:
    """I: the number of work groups is a multiple of the parallel units (when known),
    so the last wave keeps every unit busy, and at least MIN_WAVES waves of them when
    the space has that many groups' worth of work."""
    units = ctx.limits.parallel_units
    if units is None:
        return True
    n = prod(c.groups(ctx.sig.space))
    return n % units == 0 and n >= min(MIN_WAVES * units, ctx.most_groups)


def whole_subgroups(c: Candidate, ctx: Context) -> bool:
    """II: the work group size is a multiple of the (largest) subgroup size, so no
    subgroup runs partly empty."""
    return c.size % ctx.limits.subgroup_max == 0


def cache_lines(c: Candidate, ctx: Context) -> bool:
    """III: along x, the work group loads whole 64-byte cache lines, and a subgroup's
    invocations lie along x (the group is at least a subgroup wide, or as wide as the
    space), so their loads are contiguous."""
    x_invocations = ceil_div(ctx.sig.space[0], c.work.x)
    wide = c.workgroup[0] >= min(ctx.limits.subgroup_max, x_invocations)
    return wide and (c.workgroup[0] * c.work.x * ctx.sig.bytes_x) % CACHE_LINE == 0


def min_padding(c: Candidate, ctx: Context) -> bool:
    """IV: the grid covers the space with (near) the least padding of any candidate."""
    return c.waste(ctx.sig.space) <= ctx.min_waste + PAD_SLACK


def conv_block_in_band(w: WorkShape, space: Triple) -> bool:
    """Whether a conv invocation's block of P pixels x Z slices has Z <= P <= 4Z (P ~ 2Z).
    When the space has fewer pixels than Z, all of them count as enough; when Z is every
    slice there is, P has no upper bound."""
    pixels = w.x * w.y
    low = min(w.z, space[0] * space[1])
    high = CONV_PIXELS_PER_SLICE * 2 * w.z if w.z < space[2] else pixels
    return low <= pixels <= high


def preferred_block(sig: KernelSignature) -> int:
    """P x Z of the kernel's preferred work shape (its first that fits the space)."""
    return usable_work(sig)[0].volume


def min_loads(c: Candidate, ctx: Context) -> bool:
    """V: little data loaded for what is computed (by kernel kind).

    conv and depthwise: a subgroup spans pixels of one output slice, so its weight
      loads are uniform (one load, not one per lane): the group's pixel plane holds at
      least a subgroup of invocations (or every invocation the plane has); and
    - conv: per invocation, Z <= P <= 4Z for P pixels and Z output slices (P ~ 2Z), and
      P x Z at least half the kernel's preferred block (each input vector and weight
      block loaded feeds that many outputs);
    - depthwise: the covered plane has at least DEPTHWISE_MIN_PLANE pixels (or all of
      them), sharing its halo;
    other kinds load what they write: always true."""
    kind = ctx.sig.kind
    if kind not in ("conv", "depthwise"):
        return True
    sx, sy, _ = ctx.sig.space
    w = c.work
    plane_invocations = ceil_div(sx, w.x) * ceil_div(sy, w.y)
    if c.workgroup[0] * c.workgroup[1] < min(ctx.limits.subgroup_max, plane_invocations):
        return False
    if kind == "conv":
        return conv_block_in_band(w, ctx.sig.space) and 2 * w.volume >= ctx.conv_block
    px, py, _ = c.covered
    return w.z == 1 and min(px, sx) * min(py, sy) >= min(DEPTHWISE_MIN_PLANE, sx * sy)


Rule = Callable[[Candidate, Context], bool]
RULES: tuple[tuple[str, Rule], ...] = (
    ("I", full_waves),
    ("II", whole_subgroups),
    ("III", cache_lines),
    ("IV", min_padding),
    ("V", min_loads),
)
# Between candidates passing as many rules, the one passing the rules costliest to
# miss (measured on lavapipe: a miss of V cost up to 3x, of III up to 1.3x, of IV and
# I up to 1.2x).
PRIORITY = ("V", "III", "IV", "I", "II")


def passed(c: Candidate, ctx: Context) -> tuple[str, ...]:
    """Names of the rules `c` passes."""
    return tuple(name for name, rule in RULES if rule(c, ctx))
