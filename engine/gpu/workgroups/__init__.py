"""Work group selection: which work group size and per-invocation work a kernel uses.

Pure Python, no GPU: a kernel describes itself as a `KernelSignature`, the
device as `DeviceLimits`, and `choose()` answers with a `Choice` by one policy:
- "table": fixed per-kernel defaults (table.py);
- "heuristic": rules I-V over the candidate set, no timing (rules.py, heuristic.py);
- "tune": the fastest by an injected timer, exhaustive or neighbourhood descent,
  remembered per adapter in a `TuneCache` (tune.py, cache.py).
See docs/workgroups.md.

    choice = choose(sig, DeviceLimits.from_wgpu(device.limits, adapter.info), "heuristic")
    grid = choice.groups(sig.space)  # dispatch counts; choice.workgroup, choice.work
"""

from __future__ import annotations

from engine.gpu.workgroups.cache import AdapterKey, TuneCache
from engine.gpu.workgroups.candidates import candidates, within_limits
from engine.gpu.workgroups.heuristic import heuristic
from engine.gpu.workgroups.limits import DeviceLimits
from engine.gpu.workgroups.rules import RULES, Context, passed
from engine.gpu.workgroups.spec import Candidate, Choice, KernelSignature, WorkShape
from engine.gpu.workgroups.table import table
from engine.gpu.workgroups.tune import TimeFn, Tuned, neighbours, tune

POLICIES = ("table", "heuristic", "tune")

__all__ = [
    "POLICIES",
    "RULES",
    "AdapterKey",
    "Candidate",
    "Choice",
    "Context",
    "DeviceLimits",
    "KernelSignature",
    "TimeFn",
    "TuneCache",
    "Tuned",
    "WorkShape",
    "candidates",
    "choose",
    "heuristic",
    "neighbours",
    "passed",
    "table",
    "tune",
    "within_limits",
]


def choose(
    sig: KernelSignature,
    limits: DeviceLimits,
    policy: str = "heuristic",
    *,
    cache: TuneCache | None = None,
    time_fn: TimeFn | None = None,
    method: str = "exhaustive",
    runs: int = 5,
) -> Choice:
    """The work group and work shape for `sig` by `policy` (see the module docstring).

    "tune" needs `time_fn` unless `cache` already knows the signature."""
    if policy == "table":
        return table(sig, limits)
    if policy == "heuristic":
        return heuristic(sig, limits)
    if policy != "tune":
        raise ValueError(f"work group policy {policy!r}: expected one of {POLICIES}")
    if time_fn is None:
        hit = cache.get(sig, limits, method) if cache is not None else None
        if hit is None:
            raise ValueError(f"{sig.key()}: policy 'tune' needs a time_fn (cache has no entry)")
        return hit.choice
    return tune(sig, limits, time_fn, method=method, runs=runs, cache=cache).choice
