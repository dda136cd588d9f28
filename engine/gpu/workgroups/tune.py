"""Policy `tune`: time candidates on the device and keep the fastest.

- exhaustive: every candidate of the set (candidates.py);
- descent: start from the heuristic choice; time all its neighbours, move to the
  fastest if it beats the current one by more than `min_gain`; repeat; stop when
  none does. Neighbours differ by a factor 2 on one axis of (work group, work
  shape), or move a factor 2 from one such axis to another.
A candidate's time is the median of `runs` calls of the injected `time_fn`
(milliseconds; math.inf for a candidate the device cannot run). With a cache,
a known signature is answered from it and nothing is timed.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from engine.gpu.workgroups.candidates import candidates
from engine.gpu.workgroups.heuristic import heuristic
from engine.gpu.workgroups.limits import DeviceLimits
from engine.gpu.workgroups.spec import Candidate, Choice, KernelSignature

if TYPE_CHECKING:
    from engine.gpu.workgroups.cache import TuneCache

TimeFn = Callable[[Candidate], float]
METHODS = ("exhaustive", "descent")


@dataclass(frozen=True)
class Tuned:
    """A tuning result: the choice, its median time (ms), and how many candidates were timed."""

    choice: Choice
    ms: float
    timed: int


def _axes(c: Candidate) -> tuple[int, ...]:
    return (*c.workgroup, *c.work.as_tuple())


def is_neighbour(a: Candidate, b: Candidate) -> bool:
    """One axis x2 or /2, or a factor 2 moved from one axis to another."""
    ups = downs = 0
    for p, q in zip(_axes(a), _axes(b), strict=True):
        if q == 2 * p:
            ups += 1
        elif 2 * q == p:
            downs += 1
        elif p != q:
            return False
    return (ups, downs) in ((1, 0), (0, 1), (1, 1))


def neighbours(c: Candidate, pool: list[Candidate]) -> list[Candidate]:
    return [n for n in pool if is_neighbour(c, n)]


def tune(
    sig: KernelSignature,
    limits: DeviceLimits,
    time_fn: TimeFn,
    *,
    method: str = "exhaustive",
    runs: int = 5,
    min_gain: float = 0.0,
    cache: TuneCache | None = None,
) -> Tuned:
    """The fastest candidate by `method`; answered from `cache` (timed=0) when it knows."""
    if method not in METHODS:
        raise ValueError(f"tune method {method!r}: expected one of {METHODS}")
    if min_gain < 0:
        raise ValueError(f"min_gain {min_gain} must be >= 0 (descent must strictly improve)")
    if cache is not None and (hit := cache.get(sig, limits, method)) is not None:
        return hit
    times: dict[Candidate, float] = {}

    def measure(c: Candidate) -> float:
        if c not in times:
            times[c] = statistics.median(time_fn(c) for _ in range(max(1, runs)))
        return times[c]

    pool = candidates(sig, limits)
    if method == "exhaustive":
        best = min(pool, key=measure)  # first of equals: the candidate order
    else:
        best = heuristic(sig, limits).candidate
        while True:
            near = neighbours(best, pool)
            if not near:
                break
            step = min(near, key=measure)
            if not measure(step) < measure(best) * (1 - min_gain):
                break
            best = step
    if math.isinf(measure(best)):
        raise ValueError(f"{sig.key()}: time_fn rejected every timed candidate")
    result = Tuned(Choice.of(best, "tuned"), measure(best), len(times))
    if cache is not None:
        cache.put(sig, result, method)
    return result
