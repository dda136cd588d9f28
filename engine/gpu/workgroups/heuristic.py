"""Policy `heuristic`: the candidate passing the most rules, without timing anything.

Ties, in order: the rules passed by priority (rules.PRIORITY), the kernel's
preferred work shape (its first listed), less padding, a size closer to 64
invocations, an x extent closer to the subgroup size (one subgroup reads along one
row; the rest of the group stacks rows), then wider y.
"""

from __future__ import annotations

from functools import lru_cache

from engine.gpu.workgroups import memo
from engine.gpu.workgroups.candidates import candidates
from engine.gpu.workgroups.limits import DeviceLimits
from engine.gpu.workgroups.rules import PRIORITY, Context, passed
from engine.gpu.workgroups.spec import Candidate, Choice, KernelSignature

PREFERRED_SIZE_LOG2 = 6  # 64 invocations: the size every current kernel settled on


def rank(c: Candidate, ctx: Context) -> tuple:
    """Sort key: smaller is better."""
    ok = passed(c, ctx)
    return (
        -len(ok),
        tuple(name not in ok for name in PRIORITY),
        ctx.sig.work.index(c.work),
        c.waste(ctx.sig.space),
        abs(c.size.bit_length() - 1 - PREFERRED_SIZE_LOG2),
        abs(c.workgroup[0].bit_length() - ctx.limits.subgroup_max.bit_length()),
        -c.workgroup[1],
    )


@lru_cache(maxsize=4096)
def heuristic(sig: KernelSignature, limits: DeviceLimits) -> Choice:
    """The heuristic choice for `sig` on a device with `limits` (memoised: a layer shape
    seen before, in this process or, on disk, in an earlier one, costs nothing)."""
    known = memo.lookup(sig, limits)
    if known is not None:
        return known
    choice = ranked(sig, limits)
    memo.remember(sig, limits, choice)
    return choice


def ranked(sig: KernelSignature, limits: DeviceLimits) -> Choice:
    """The heuristic choice, ranked now (what the disk memo remembers)."""
    pool = candidates(sig, limits)
    ctx = Context.of(sig, limits, pool)
    return Choice.of(min(pool, key=lambda c: rank(c, ctx)), "heuristic")
