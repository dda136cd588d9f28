"""Generated single-layer models: one per family, LiteRT against the reference, and each
runs on a GPU kernel (no CPU fallback in its dispatch list)."""

from __future__ import annotations

import numpy as np
import pytest

from engine.latency.kernels import FAMILIES, MAX_FLOPS, kernel_graphs
from engine.latency.measure import random_feeds
from engine.model.cost import op_flops
from engine.model.writer import write_tflite
from tests.helpers.latency import PROFILE

GRAPHS = kernel_graphs(len(FAMILIES), seed=3)


@pytest.mark.parametrize("index", range(len(FAMILIES)))
def test_generated_layer_matches_litert(tmp_path, index):
    pytest.importorskip("ai_edge_litert")
    from engine.latency.dispatches import dispatch_list
    from engine.reference import Interpreter
    from engine.reference.oracle import run_litert

    family, _, g = GRAPHS[index]
    assert family == FAMILIES[index] and sum(op_flops(g, op) for op in g.ops) <= MAX_FLOPS
    path = tmp_path / "layer.tflite"
    path.write_bytes(write_tflite(g))
    feeds = random_feeds(g)
    want = run_litert(path, feeds)
    got = Interpreter(g).run(feeds)
    for name, ref in want.items():
        np.testing.assert_allclose(got[name], ref, rtol=1e-4, atol=1e-4 * np.abs(ref).max())
    assert all(d.op_type != "io" or d.kernel.startswith(("hwc", "phwc4"))
               for d in dispatch_list(g, PROFILE))  # fmt: skip


def test_kernel_graphs_are_seeded():
    again = kernel_graphs(len(FAMILIES), seed=3)
    assert [k for _, k, _ in again] == [k for _, k, _ in GRAPHS]
