"""The dispatch-level predictor's measured dispatches (a dispatch seen in training priced at
its median there), its adaptation to another adapter class, and the GPU-time label."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from engine.latency.predictors import DispatchLevel, metrics, samples
from engine.latency.predictors.base import label
from engine.latency.predictors.dispatch import measured_pays, signature
from tests.helpers.latency import dispatch, sample

KINDS = ("conv2d",) * 12 + ("pool2d",) * 12  # more shapes than a family model has terms


def shapes(seed: int = 5) -> tuple[list, list]:
    """24 fixed dispatches and, for each, a time no linear model of its costs gives."""
    rng = np.random.default_rng(seed)
    ds = [dispatch(rng, k) for k in KINDS]
    return ds, [float(t) for t in rng.uniform(0.01, 0.2, len(ds))]


def models(n: int, seed: int, scale: dict | None = None, per_run: float = 0.1) -> list:
    """`n` models, each 8-20 of the 24 dispatches (at other places in the model), their
    times x `scale` per family; label = per_run + the dispatches' times."""
    ds, times = shapes()
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        picks = rng.integers(0, len(ds), int(rng.integers(8, 21)))
        chosen = [dataclasses.replace(ds[j], op_index=k) for k, j in enumerate(picks)]
        ms = [times[j] * (scale or {}).get(ds[j].kernel, 1.0) for j in picks]
        out.append(sample(h=f"{seed}-{i}", y=per_run + sum(ms), dispatches=chosen,
                          dispatch_ms=ms))  # fmt: skip
    return out


def test_a_dispatch_seen_in_training_is_priced_at_its_measured_median():
    train, test = models(40, seed=1), models(30, seed=2)
    p = DispatchLevel(units=2).fit(train)
    assert len(p.params["measured"]) == len(KINDS)
    trues = [s.y for s in test]
    assert metrics(p.predict_many(test), trues)["acc1"] == 1.0
    families_only = DispatchLevel(units=2).fit(train, measured=False)
    assert families_only.params["measured"] == {}
    assert metrics(families_only.predict_many(test), trues)["acc10"] < 0.9


def test_measured_dispatches_are_used_only_where_they_pay():
    assert measured_pays(models(40, seed=1), (), 2)
    from tests.helpers.latency import dataset

    # every dispatch a new shape, times linear in its costs: the families say it all
    assert not measured_pays(dataset(20), (), 2)
    assert DispatchLevel(units=2).fit(dataset(20)).params["measured"] == {}


def test_the_signature_is_the_dispatch_without_its_place():
    d, _ = shapes()
    assert signature(d[0]) == signature(dataclasses.replace(d[0], op_index=7))
    assert signature(d[0]) != signature(dataclasses.replace(d[0], groups=(3, 1, 1)))


def test_adapted_to_another_class_with_a_few_of_its_models():
    first = DispatchLevel(units=2).fit(models(40, seed=1))
    scale = {"conv2d": 3.0, "pool2d": 0.5}
    few, test = models(20, seed=3, scale=scale, per_run=0.4), models(30, 4, scale, 0.4)
    trues = [s.y for s in test]
    assert metrics(first.predict_many(test), trues)["acc10"] < 0.5  # as is: the wrong class
    adapted = first.adapted(few)
    assert metrics(adapted.predict_many(test), trues)["acc1"] == 1.0
    assert adapted.params["per_run"] == pytest.approx(0.4, abs=1e-6)


def test_adaptation_needs_profiled_models():
    first = DispatchLevel(units=2).fit(models(40, seed=1))
    few = models(5, seed=3)
    for s in few:
        s.dispatch_ms = None
    with pytest.raises(ValueError, match="profiled"):
        first.adapted(few)


def test_the_gpu_label_is_the_sum_of_the_profiled_dispatches():
    row = {"engine_median_ms": 2.0, "dispatch_ms": [None, 0.25, 0.5, None]}
    assert label(row, "gpu") == 0.75
    assert label(row, "median") == 2.0
    assert label({"dispatch_ms": [None, None]}, "gpu") is None


def test_a_dataset_without_dispatch_times_cannot_label_gpu_time():
    with pytest.raises(ValueError, match="per-dispatch GPU times"):
        samples([{"engine_median_ms": 1.0, "dispatch_ms": []}], "gpu")


def test_report_on_gpu_time_with_an_adaptation_section(tmp_path):
    """`engine-latency report --target gpu --second` on the first 120 cells of the H100 and
    lavapipe datasets (real rows; the two classes measured the same cells)."""
    import json
    import shutil

    from engine.latency import dataset
    from engine.latency.cli import main

    paths = {}
    for name in ("nvidia-h100", "lavapipe"):
        src = f"data/latency/{name}.csv.gz"
        paths[name] = tmp_path / f"{name}.csv.gz"
        dataset.append_rows(paths[name], dataset.read_rows(src)[:120])
        shutil.copy(dataset.profile_path(src), dataset.profile_path(paths[name]))
    out = tmp_path / "report"
    assert main(["report", "--dataset", str(paths["nvidia-h100"]), "--target", "gpu",
                 "--second", str(paths["lavapipe"]), "--out", str(out)]) == 0  # fmt: skip
    doc = json.loads((out / "report.json").read_text())
    assert doc["target"] == "gpu"
    assert doc["adaptation"]["adapter"] == "lavapipe"
    for k in ("10", "100") if "100" in doc["adaptation"] else ("10",):
        assert set(doc["adaptation"][k]) == {"adapted", "alone"}
    text = (out / "report.md").read_text()
    assert "the GPU time of the dispatch list" in text
    assert "### Adaptation to lavapipe" in text and "(e-) dispatch-level" in text


def test_the_measured_dispatches_survive_save_and_load(tmp_path):
    from engine.latency.predictors import load

    p = DispatchLevel(units=2).fit(models(40, seed=1))
    assert p.params["measured"] and set(p.params["measured_check"]) == {"families", "measured"}
    test = models(10, seed=2)
    again = load(p.save(tmp_path / "dispatch.json"))
    assert again.predict_many(test) == p.predict_many(test)


def test_a_file_saved_before_the_measured_dispatches_prices_by_family():
    p = DispatchLevel(units=2).fit(models(40, seed=1))
    old = DispatchLevel(params={k: v for k, v in p.params.items() if k != "measured"})
    families = DispatchLevel(units=2).fit(models(40, seed=1), measured=False)
    test = models(10, seed=2)
    d = test[0].dispatches[0]
    assert old.kernel_ms(d) == families.kernel_ms(d) != p.kernel_ms(d)


def test_adapted_keeps_what_predict_needs():
    first = DispatchLevel(units=2, meta={"adapter": "a", "profile": {"name": "a"}})
    first.fit(models(40, seed=1))
    adapted = first.adapted(models(20, seed=3, scale={"conv2d": 2.0}))
    assert adapted.meta["profile"] == {"name": "a"} and adapted.meta["adapted_with"] == 20
