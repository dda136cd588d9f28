"""engine/gpu/submits.py: where a run submits early, and that early submits change
nothing but the submit count (the queue keeps the order): outputs bit-identical to one
submit, on a real model and across a CPU fallback."""

from __future__ import annotations

import numpy as np
import pytest

from engine.gpu.adapters import CLASSES
from engine.gpu.engine import Engine
from engine.gpu.submits import ONE_SUBMIT, SUBMITS, SubmitPlan
from engine.model.ir import Graph, Op, Tensor
from tests.helpers.files import model_file
from tests.helpers.gpu import gpu_context

gpu_context()


@pytest.mark.parametrize(
    "plan, total, points",
    [
        (ONE_SUBMIT, 46, set()),
        (SubmitPlan(8), 46, {8}),
        (SubmitPlan(8, 16), 46, {8, 24, 40}),
        (SubmitPlan(8, 16), 40, {8, 24}),  # never at the end: the final submit follows
        (SubmitPlan(50, 4), 46, set()),
        (SubmitPlan(1, 1), 4, {1, 2, 3}),
    ],
)
def test_points(plan, total, points):
    assert plan.points(total) == points


@pytest.mark.parametrize("args", [(0,), (4, 0), (None, 4), (-1, None)])
def test_a_plan_that_means_nothing_is_refused(args):
    with pytest.raises(ValueError, match="SubmitPlan"):
        SubmitPlan(*args)


def test_every_adapter_class_has_a_row():
    assert set(SUBMITS) == set(CLASSES)


def _run(engine: Engine, plan: SubmitPlan, feeds: dict) -> tuple[dict, int]:
    """One run with `plan`, every tensor poisoned first: a dispatch that an early submit
    dropped leaves NaN behind instead of the last run's values."""
    engine.runtime.submits = plan
    engine.poison()
    out = engine.run(feeds)
    return out, engine.stats.submits


def test_early_submits_leave_a_model_s_outputs_bit_identical():
    engine = Engine.from_tflite(model_file("face_detection_short_range"))
    rng = np.random.default_rng(11)
    feeds = {engine.graph.tensors[i].name: rng.uniform(-1, 1, engine.graph.tensors[i].shape)
             .astype(np.float32) for i in engine.graph.inputs}  # fmt: skip
    once, submits = _run(engine, ONE_SUBMIT, feeds)
    assert submits == 1
    total = engine.stats.dispatches
    for plan in (SubmitPlan(1, 1), SUBMITS["gpu"], SubmitPlan(total - 1)):  # gpu: what GPUs run
        got, submits = _run(engine, plan, feeds)
        assert submits == 1 + len(plan.points(total))
        assert engine.stats.dispatches == total
        for name, value in once.items():
            np.testing.assert_array_equal(got[name], value)


def test_early_submits_around_a_cpu_fallback():
    tensors = [Tensor("x", (1, 4, 5, 6), "float32"), Tensor("r", (1, 4, 5, 6), "float32"),
               Tensor("axes", (1,), "int32", data=np.array([3], np.int32)),
               Tensor("p", (1, 4, 5, 1), "float32"), Tensor("y", (1, 4, 5, 1), "float32")]  # fmt: skip
    ops = [Op("RELU", (0,), (1,), {}), Op("REDUCE_PROD", (1, 2), (3,), {"keep_dims": True}),
           Op("RELU", (3,), (4,), {})]  # fmt: skip
    engine = Engine(Graph(tensors, ops, [0], [4], name="relu_prod_relu"), transforms=False)
    assert engine.fallback_ops == ["#1 REDUCE_PROD"]
    feeds = {"x": np.random.default_rng(5).uniform(0.5, 1.5, (1, 4, 5, 6)).astype(np.float32)}
    once, submits = _run(engine, ONE_SUBMIT, feeds)
    assert submits == 2  # the fallback's own
    got, submits = _run(engine, SubmitPlan(1, 1), feeds)
    assert submits > 2
    np.testing.assert_array_equal(got["y"], once["y"])
    np.testing.assert_allclose(once["y"][..., 0], np.prod(feeds["x"], axis=3), rtol=1e-5)
