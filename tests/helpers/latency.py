"""Latency-test fixtures: a made-up adapter profile and tiny synthetic datasets whose
coefficients the predictors must recover."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from engine.latency.builder import NetConfig, build_tflite
from engine.latency.cell import INPUT, OUTPUT, Cell
from engine.latency.dispatches import AdapterProfile, DispatchInfo
from engine.latency.predictors import Sample
from engine.latency.predictors.dispatch import features

PROFILE = AdapterProfile(
    name="test", device="test", driver="", backend="", adapter_type="CPU",
    limits={"max_invocations": 256, "max_size": [256, 256, 64], "max_groups": 65535,
            "subgroup_min": 8, "subgroup_max": 8, "parallel_units": 2},
    alignment=32,
)  # fmt: skip


def tiny_cell_model(folder: Path) -> Path:
    """The smallest NAS-Bench-101 cell (input -> output: the stem conv and the head only)
    written as `folder`/cell.tflite: a real model every latency command takes."""
    path = Path(folder) / "cell.tflite"
    path.write_bytes(build_tflite(Cell.make([[0, 1], [0, 0]], [INPUT, OUTPUT]), NetConfig()))
    return path


def sample(flops=0, memory=1, y=None, dispatches=(), dispatch_ms=None, h="x") -> Sample:
    """A dataset row (`h`: its hash)."""
    return Sample(hash=h, flops=flops, peak_memory=memory, dispatches=list(dispatches), y=y,
                  dispatch_ms=dispatch_ms)  # fmt: skip


def dispatch(rng, kernel: str) -> DispatchInfo:
    """One random dispatch of `kernel`."""
    groups = int(rng.choice([1, 2, 4, 8, 64]))
    return DispatchInfo(
        op_index=0, op_type="X", kernel=kernel, inputs=((1, 8, 8, 4),), output=(1, 8, 8, 4),
        workgroup=(8, 8, 1), groups=(groups, 1, 1), flops=int(rng.uniform(1e4, 1e7)),
        bytes_read=int(rng.uniform(1e3, 1e6)), bytes_written=int(rng.uniform(1e3, 1e6)),
        const_bytes=0, uniform=True, storage="buffer>buffer", epilogue=0,
    )  # fmt: skip


TRUE = {  # per family: weights over FEATURES (one, mflops, serial_mflops, mb_read, ...)
    "conv2d": [0.03, 0.2, 0.1, 0.0, 0.0, 0.0, 0.0],
    "pool2d": [0.02, 0.0, 0.0, 0.5, 0.3, 0.0, 0.0],
}


def dataset(n: int, seed: int = 2) -> list[Sample]:
    """`n` samples whose per-dispatch times follow TRUE exactly, plus 0.1 ms per run and
    0.01 ms per dispatch."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        ds = [dispatch(rng, str(rng.choice(list(TRUE)))) for _ in range(int(rng.integers(3, 9)))]
        ms = [sum(w * x for w, x in zip(TRUE[d.kernel], features(d, 2), strict=True)) for d in ds]
        y = 0.1 + 0.01 * len(ds) + sum(ms)
        out.append(sample(h=str(i), y=y, dispatches=ds, dispatch_ms=ms))
    return out
