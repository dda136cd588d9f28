"""Compile progress (engine/gpu/progress.py) and warm-up (engine/gpu/warmup.py): the phases
in order with k/n counts, only to the listener of the compiling thread, a listener that
stops a build, and an engine that still computes right after a warm-up (on its own device
or on a scratch device of the same adapter)."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from engine.gpu.engine import Engine
from engine.gpu.progress import PHASES, Progress, report_to
from engine.gpu.warmup import scratch_context, warm_up
from engine.reference import Interpreter
from tests.helpers.gpu import gpu_context
from tests.helpers.single_op import random_feeds, single_op_graph

CTX = gpu_context()
ATTRS = {"padding": "SAME", "stride_w": 1, "stride_h": 1, "fused_activation_function": "RELU"}


def _graph(seed: int, cout: int = 6):
    w = np.random.default_rng(seed).standard_normal((cout, 3, 3, 5)).astype(np.float32)
    g = single_op_graph("CONV_2D", [(1, 9, 7, 5), w, None], ATTRS)
    return g


def _check_order(events: list[Progress], model: str) -> None:
    mine = [e for e in events if e.model == model]
    phases = [e.phase for e in mine]
    assert phases[0] == "graph" and phases[-1] == "ready", phases
    assert phases == sorted(phases, key=PHASES.index), phases  # graph, pipelines, shaders, ready
    for phase in ("pipelines", "shaders"):
        steps = [e for e in mine if e.phase == phase]
        n = steps[0].total
        assert [e.done for e in steps] == list(range(n + 1)) and n >= 1, steps


@pytest.mark.parametrize("scratch", [False, True])
def test_progress_in_order_and_results_unchanged(scratch):
    graph = _graph(seed=1 + scratch, cout=22 + scratch)  # shapes no other test compiles
    feeds = random_feeds(graph, np.random.default_rng(0))
    events: list[Progress] = []
    with report_to(events.append):
        engine = Engine(graph, context=CTX)
        n = warm_up(engine, scratch=scratch_context(CTX) if scratch else None)
    name = events[0].model
    _check_order(events, name)
    assert n == len({id(d.pipeline) for s in engine.resources.segments for d in s.dispatches})
    got = engine.run(feeds)  # the warm-up's garbage is recomputed
    want = Interpreter(graph).run(feeds)
    for k in want:
        np.testing.assert_allclose(got[k], want[k], rtol=1e-4, atol=1e-4)


def test_only_the_compiling_thread_listens():
    heard, other = [], []

    def elsewhere():
        Engine(_graph(seed=3), context=CTX)  # no listener on this thread

    with report_to(heard.append):
        t = threading.Thread(target=elsewhere)
        t.start()
        t.join()
    with report_to(other.append):
        pass
    assert heard == [] and other == []


def test_a_listener_can_stop_the_build():
    class Stop(Exception):
        pass

    def stop(p: Progress) -> None:
        if p.phase == "pipelines" and p.done >= 1:
            raise Stop

    with report_to(stop), pytest.raises(Stop):
        Engine(_graph(seed=4, cout=9), context=CTX)
