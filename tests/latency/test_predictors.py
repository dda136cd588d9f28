"""Predictors on tiny synthetic datasets recover the coefficients they were made with."""

from __future__ import annotations

import numpy as np
import pytest

from engine.latency.dispatches import DispatchInfo
from engine.latency.predictors import (
    BetterFlops,
    DispatchLevel,
    FlopsLinear,
    Sample,
    engine_fingerprint,
    load,
    metrics,
)
from engine.latency.predictors.dispatch import GENERIC
from tests.helpers.latency import TRUE, dataset, sample


def test_flops_regression_recovers_its_line():
    rng = np.random.default_rng(0)
    data = [sample(int(f), y=0.5 + 2e-7 * f) for f in rng.uniform(1e6, 5e7, 20)]
    a, b = FlopsLinear().fit(data).params["coef"]
    assert a == pytest.approx(0.5) and b == pytest.approx(2e-7)


def test_better_flops_fits_one_line_per_memory_cluster():
    rng = np.random.default_rng(1)
    data = [sample(int(f), 100_000, 1.0 + 1e-7 * f) for f in rng.uniform(1e6, 5e7, 15)]
    data += [sample(int(f), 10_000_000, 3.0 + 4e-7 * f) for f in rng.uniform(1e6, 5e7, 15)]
    p = BetterFlops(clusters=2).fit(data)
    lines = sorted(p.params["lines"])
    assert lines[0] == pytest.approx([1.0, 1e-7]) and lines[1] == pytest.approx([3.0, 4e-7])
    assert p.predict(sample(2e7, 9_000_000)) == pytest.approx(3.0 + 4e-7 * 2e7)


def test_dispatch_level_recovers_kernel_and_overhead_terms():
    p = DispatchLevel(units=2).fit(dataset(40))
    for fam, w in TRUE.items():
        assert p.params["families"][fam] == pytest.approx(w, abs=1e-9)
    assert p.params["per_run"] == pytest.approx(0.1, abs=1e-6)
    assert p.params["per_dispatch"] == pytest.approx(0.01, abs=1e-6)
    assert p.params["scale"] == pytest.approx(1.0, abs=1e-6)
    test = dataset(10, seed=3)
    assert metrics(p.predict_many(test), [s.y for s in test])["acc1"] == 1.0


def test_dispatch_level_from_totals_only():
    data = dataset(120)
    for s in data:
        s.dispatch_ms = None
    p = DispatchLevel(units=2).fit(data)
    test = dataset(20, seed=4)
    m = metrics(p.predict_many(test), [s.y for s in test])
    assert m["acc1"] == 1.0, m
    assert GENERIC in p.params["families"]


def test_metrics_by_hand():
    m = metrics([1.0, 1.04, 1.2, float("nan")], [1.0, 1.0, 1.0, 1.0])
    assert (m["acc1"], m["acc5"], m["acc10"]) == (0.25, 0.5, 0.5)
    assert m["predicted"] == 3 and m["rmse_ms"] == pytest.approx(np.sqrt((0.04**2 + 0.2**2) / 3))


def test_saved_predictor_round_trips_and_warns(tmp_path):
    p = DispatchLevel(units=2).fit(dataset(30))
    p.meta = {"adapter": "lavapipe", "precision": "fp32", "engine": engine_fingerprint()}
    q = load(p.save(tmp_path / "dispatch.json"))
    test = dataset(5, seed=5)
    assert q.predict_many(test) == p.predict_many(test)
    assert q.warnings("lavapipe", "fp32") == []
    assert "not 'nvidia'" in q.warnings("nvidia")[0]
    q.meta["engine"] = "000000000000"
    assert "stale" in q.warnings(None)[0]


def test_xgboost_saves_its_native_json(tmp_path):
    pytest.importorskip("xgboost")
    from engine.latency import space
    from engine.latency.predictors.xgb import XGBoost
    from engine.latency.predictors.xgb import features as leti

    cells = space.sample_cells(30, seed=1)
    data = [Sample(hash=c.hash(), flops=10 * c.edges, peak_memory=c.vertices, dispatches=[],
                   y=1.0 + c.edges, adjacency=[list(r) for r in c.matrix], ops=list(c.ops))
            for c in cells]  # fmt: skip
    assert leti(data[0]).shape == (58,)
    p = XGBoost().fit(data)
    path = p.save(tmp_path / "xgboost.json")
    assert (tmp_path / "xgboost.model.json").exists()
    assert load(path).predict_many(data) == pytest.approx(p.predict_many(data))


def test_generated_kernels_add_families_only():
    """Kernel samples teach pool2d; the model-level terms still come from the models."""
    cells = [s for s in dataset(60) if all(d.kernel == "conv2d" for d in s.dispatches)]
    pools = [s for s in dataset(40, seed=6) if all(d.kernel == "pool2d" for d in s.dispatches)]
    for k in pools:
        k.y = 1e3  # a kernel model's total must not move per-run / per-dispatch terms
    p = DispatchLevel(units=2).fit(cells + dataset(30, seed=8), pools)
    assert p.params["families"]["pool2d"] == pytest.approx(TRUE["pool2d"], abs=1e-9)
    assert p.params["per_run"] == pytest.approx(0.1, abs=1e-6)


IO_MS_PER_MB = 0.5  # what moving one MB in and out costs in the synthetic totals below


def _io(mb: float) -> DispatchInfo:
    half = int(mb * 1e6 / 2)
    return DispatchInfo(
        op_index=-1, op_type="io", kernel="hwc_to_phwc4", inputs=((1, 8, 8, 3),),
        output=(1, 8, 8, 4), workgroup=(64, 1, 1), groups=(256, 1, 1), flops=0,
        bytes_read=half, bytes_written=half, const_bytes=0, uniform=False,
        storage="buffer>buffer", epilogue=0,
    )  # fmt: skip


def _with_io(samples: list[Sample], sizes) -> list[Sample]:
    """Each sample gets one io conversion (unprofiled: None) and its cost in the total."""
    for s, mb in zip(samples, sizes, strict=False):
        s.dispatches.append(_io(mb))
        s.dispatch_ms.append(None)
        s.y += 0.01 + IO_MS_PER_MB * mb  # its per-dispatch overhead and its copying
    return samples


def test_io_term_learnt_from_kernel_totals_where_io_sizes_vary():
    """Cells all move the same io MB (per_run cannot be told from it); the kernel models'
    varied io sizes price it, and the cells' own terms stay exact."""
    cells = _with_io(dataset(40), [0.03] * 40)
    kernels = _with_io(dataset(30, seed=9), np.linspace(0.01, 8.0, 30))
    p = DispatchLevel(units=2).fit(cells, kernels)
    assert p.params["io_ms_per_mb"] == pytest.approx(IO_MS_PER_MB, rel=1e-6)
    assert p.params["per_run"] == pytest.approx(0.1, abs=1e-6)
    assert p.params["per_dispatch"] == pytest.approx(0.01, abs=1e-6)
    assert p.params["scale"] == pytest.approx(1.0, abs=1e-6)
    big = _with_io(dataset(5, seed=10), [20.0] * 5)  # io far beyond the cells'
    assert p.predict_many(big) == pytest.approx([s.y for s in big], rel=1e-6)


def test_io_term_left_out_when_every_sample_moves_the_same_io():
    cells = _with_io(dataset(40), [0.03] * 40)
    p = DispatchLevel(units=2).fit(cells)
    assert p.params["io_ms_per_mb"] == 0.0
    assert p.params["per_run"] == pytest.approx(0.1 + IO_MS_PER_MB * 0.03, abs=1e-6)
    test = _with_io(dataset(10, seed=3), [0.03] * 10)
    assert p.predict_many(test) == pytest.approx([s.y for s in test], rel=1e-6)


def test_predictor_saved_before_the_io_term_prices_io_as_a_kernel():
    p = DispatchLevel(units=2).fit(dataset(40))
    del p.params["io_ms_per_mb"]
    io = _io(1.0)
    assert p.dispatch_ms(io) == pytest.approx(
        p.params["per_dispatch"] + p.params["scale"] * p.kernel_ms(io)
    )
