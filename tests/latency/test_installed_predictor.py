"""The predictor the wheel installs matches this engine's kernels: a change to the kernel
files, work group rules, transforms or WGSL templates needs a refit (docs/latency.md), or,
when no optimized dispatch changed, `python -m benchmarks.engine.same_dispatches --against
<the checkout it was fitted at> --restamp`."""

from __future__ import annotations

import json
from pathlib import Path

import engine
from engine.latency.predictors.base import engine_fingerprint

FITTED = Path(engine.__file__).parent / "latency" / "fitted"


def test_installed_predictors_were_fitted_on_this_engine():
    files = sorted(FITTED.glob("*.json"))
    assert files, f"no fitted predictor in {FITTED}"
    for f in files:
        stamp = json.loads(f.read_text()).get("engine")
        assert stamp == engine_fingerprint(), (
            f"{f.name} was fitted on engine {stamp}, this engine is {engine_fingerprint()}: "
            "refit, or restamp with benchmarks.engine.same_dispatches (see this module's docstring)"
        )
