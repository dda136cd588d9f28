"""tune(): exhaustive and neighbourhood descent on fake, deterministic timers."""

from __future__ import annotations

import math

import pytest

from engine.gpu.workgroups import (
    Candidate,
    DeviceLimits,
    KernelSignature,
    WorkShape,
    candidates,
    heuristic,
    neighbours,
    tune,
)
from engine.gpu.workgroups.tune import is_neighbour
from tests.helpers.workgroups import CountingTimer, conv, log_axes, scrambled

BOX = tuple(WorkShape(x, 1, z) for x in (1, 2, 4) for z in (1, 2, 4))
LIM = DeviceLimits()


def test_exhaustive_picks_the_fastest():
    sig = conv((64, 64, 16))
    timer = CountingTimer(scrambled)
    result = tune(sig, LIM, timer, runs=3)
    pool = candidates(sig, LIM)
    assert result.choice.candidate == min(pool, key=scrambled)
    assert result.ms == min(map(scrambled, pool))
    assert result.timed == len(pool) and timer.calls == 3 * len(pool)
    assert result.choice.source == "tuned"


def test_median_ignores_a_slow_first_run():
    sig = KernelSignature("k", (1024, 1, 1), work=(WorkShape(),))
    runs: dict[Candidate, int] = {}

    def first_run_compiles(c: Candidate) -> float:
        runs[c] = runs.get(c, 0) + 1
        if runs[c] == 1:  # compile spike; the 8-wide group has one fluke fast run instead
            return 0.1 if c.size == 8 else 100.0
        return 0.5 if c.workgroup == (32, 1, 1) else 1.0

    result = tune(sig, LIM, first_run_compiles, runs=3)
    assert result.choice.workgroup == (32, 1, 1) and result.ms == 0.5


def convex(targets):
    """1 + squared distance, in log2 steps, from `targets` (wg x, y, z, work x, y, z)."""
    return lambda c: 1.0 + sum((a - t) ** 2 for a, t in zip(log_axes(c), targets, strict=True))


@pytest.mark.parametrize(
    "targets",
    [(3, 1, 1, 1, 0, 1), (4, 2, 0, 2, 0, 0), (2, 2, 2, 0, 0, 2), (5, 0, 0, 1, 0, 0)],
)
def test_descent_finds_the_optimum_of_a_convex_landscape(targets):
    sig = KernelSignature("conv2d", (64, 64, 16), "conv", work=BOX)
    pool = candidates(sig, LIM)
    cost = convex(targets)
    best = min(pool, key=cost)
    assert heuristic(sig, LIM).candidate != best  # it has to move
    timer = CountingTimer(cost)
    result = tune(sig, LIM, timer, method="descent", runs=1)
    assert result.choice.candidate == best
    assert result.timed == timer.calls < len(pool)


def test_descent_stops_without_enough_gain():
    sig = KernelSignature("conv2d", (64, 64, 16), "conv", work=BOX)
    start = heuristic(sig, LIM).candidate
    flat = tune(sig, LIM, lambda c: 1.0, method="descent", runs=1)
    assert flat.choice.candidate == start  # no neighbour is strictly faster
    slight = tune(sig, LIM, lambda c: 1.0 if c == start else 0.99, method="descent", min_gain=0.05)
    assert slight.choice.candidate == start  # 1 % faster is below min_gain
    assert slight.timed == 1 + len(neighbours(start, candidates(sig, LIM)))


def test_unrunnable_candidates_are_skipped():
    sig = KernelSignature("k", (1024, 1, 1), work=(WorkShape(),))
    result = tune(sig, LIM, lambda c: math.inf if c.size > 8 else 2.0)
    assert result.choice.workgroup == (8, 1, 1)
    with pytest.raises(ValueError, match="rejected"):
        tune(sig, LIM, lambda c: math.inf)


def test_neighbours():
    a = Candidate((8, 8, 1), WorkShape(4, 1, 4))
    assert is_neighbour(a, Candidate((16, 8, 1), WorkShape(4, 1, 4)))  # x2 on one axis
    assert is_neighbour(a, Candidate((8, 4, 1), WorkShape(4, 1, 4)))  # /2
    assert is_neighbour(a, Candidate((16, 4, 1), WorkShape(4, 1, 4)))  # moved y -> x
    assert is_neighbour(a, Candidate((16, 8, 1), WorkShape(2, 1, 4)))  # work -> group
    assert not is_neighbour(a, a)
    assert not is_neighbour(a, Candidate((16, 16, 1), WorkShape(4, 1, 4)))  # two ups
    assert not is_neighbour(a, Candidate((32, 8, 1), WorkShape(4, 1, 4)))  # x4
    assert not is_neighbour(a, Candidate((16, 4, 2), WorkShape(4, 1, 4)))  # three axes


def test_bad_arguments():
    with pytest.raises(ValueError, match="method"):
        tune(conv(), LIM, scrambled, method="random")
    with pytest.raises(ValueError, match="min_gain"):
        tune(conv(), LIM, scrambled, method="descent", min_gain=-1)


@pytest.mark.parametrize("space", [(64, 64, 16), (12, 12, 40), (4096, 1, 24)])
def test_descent_on_an_irregular_landscape_ends_in_a_local_minimum(space):
    sig = KernelSignature("conv2d", space, "conv", work=BOX)
    pool = candidates(sig, LIM)
    result = tune(sig, LIM, scrambled, method="descent", runs=1)
    best = result.choice.candidate
    assert best in pool and result.timed <= len(pool)
    assert all(scrambled(n) >= result.ms for n in neighbours(best, pool))
