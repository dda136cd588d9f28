"""Wall time: one call timed, per-run samples, the summary every row reports."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import TypeVar

import numpy as np

T = TypeVar("T")


@dataclass(frozen=True)
class Summary:
    """Milliseconds per run over `runs` timed runs (p90: linear interpolation)."""

    runs: int
    mean: float
    median: float
    min: float
    p90: float
    max: float

    def as_dict(self) -> dict:
        return asdict(self)


def summarize(samples_ms: list[float]) -> Summary:
    a = np.asarray(samples_ms, np.float64)
    if a.size == 0:
        raise ValueError("no samples")
    return Summary(
        runs=int(a.size),
        mean=float(a.mean()),
        median=float(np.median(a)),
        min=float(a.min()),
        p90=float(np.percentile(a, 90)),
        max=float(a.max()),
    )


def timed(fn: Callable[[], T]) -> tuple[T, float]:
    """`fn()`'s result and the wall ms it took."""
    t0 = time.perf_counter()
    out = fn()
    return out, (time.perf_counter() - t0) * 1e3


def time_runs(fn: Callable[[], object], runs: int, warmup: int) -> tuple[list[float], list[float]]:
    """Call `fn` warmup times untimed, then `runs` times; returns (wall ms, process CPU ms)."""
    for _ in range(warmup):
        fn()
    wall, cpu = [], []
    for _ in range(runs):
        w0, c0 = time.perf_counter(), time.process_time()
        fn()
        wall.append((time.perf_counter() - w0) * 1e3)
        cpu.append((time.process_time() - c0) * 1e3)
    return wall, cpu
