"""SOFTMAX kernel vs the reference (last axis, beta, channel counts off multiples of 4)."""

from __future__ import annotations

import numpy as np
import pytest

from tests.helpers.gpu import check_single_submit, gpu_context
from tests.helpers.single_op import random_feeds, single_op_graph

ctx = gpu_context()

CASES = [
    ((1, 5, 6, 7), 1.0),
    ((1, 4, 4, 8), 0.5),
    ((1, 3, 3, 1), 1.0),  # one channel: all ones
    ((1, 1000), 1.0),  # classifier head: one pixel, 250 slices
    ((2, 3, 13), 2.0),
    ((12,), 1.0),
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_softmax(case):
    shape, beta = case
    graph = single_op_graph("SOFTMAX", [shape], {"beta": beta})
    check_single_submit(graph, random_feeds(graph, np.random.default_rng(1), scale=10.0))


@pytest.mark.skipif(not ctx.has_f16, reason="adapter lacks shader-f16")
def test_softmax_fp16():
    graph = single_op_graph("SOFTMAX", [(1, 4, 5, 11)], {"beta": 1.0})
    check_single_submit(graph, random_feeds(graph, np.random.default_rng(2), scale=4.0), "fp16")
