"""PAD / PADV2 kernel vs the reference: spatial, channel (lane-wise), batch padding."""

from __future__ import annotations

import numpy as np
import pytest

from engine.gpu.kernels.base import select
from tests.helpers.gpu import check_single_submit, gpu_context
from tests.helpers.single_op import random_feeds, single_op_graph

ctx = gpu_context()

PAD_CASES = [
    # (input shape, paddings)
    ((1, 16, 16, 24), [[0, 0], [0, 0], [0, 0], [0, 4]]),  # face_detection 24 -> 28
    ((1, 16, 16, 42), [[0, 0], [0, 0], [0, 0], [0, 6]]),  # 42 -> 48: partial last slice
    ((1, 8, 8, 16), [[0, 0], [0, 0], [0, 0], [0, 16]]),  # face_landmark 16 -> 32
    ((1, 12, 13, 3), [[0, 0], [0, 1], [0, 1], [0, 0]]),  # before a stride-2 conv
    ((1, 9, 7, 6), [[0, 0], [2, 2], [1, 3], [0, 0]]),
    ((1, 5, 6, 5), [[0, 0], [1, 0], [0, 2], [4, 3]]),  # channel pad before, aligned
    ((1, 5, 6, 5), [[0, 0], [0, 0], [0, 0], [3, 1]]),  # unaligned: lane gather
    ((1, 4, 5, 9), [[0, 0], [1, 1], [1, 1], [1, 2]]),
    ((2, 3, 4, 5), [[1, 1], [0, 1], [0, 0], [0, 3]]),  # batch
    ((7, 10), [[1, 2], [3, 0]]),  # rank 2 -> (1, 1, A, B)
    ((4, 5, 6), [[1, 0], [0, 2], [2, 1]]),  # rank 3
]


@pytest.mark.parametrize("case", PAD_CASES, ids=lambda c: f"{c[0]}-{c[1]}")
@pytest.mark.parametrize("op", ["PAD", "PADV2"])
def test_pad(case, op):
    shape, pads = case
    inputs = [shape, np.array(pads, np.int32)]
    if op == "PADV2":
        inputs.append(np.array([-1.5], np.float32))
    graph = single_op_graph(op, inputs)
    check_single_submit(graph, random_feeds(graph, np.random.default_rng(1)))


def test_pad_non_constant_paddings_fall_back():
    graph = single_op_graph("PAD", [(1, 4, 4, 4), np.array([[0, 0]] * 4, np.int32)])
    pad_id = graph.ops[0].inputs[1]
    graph.tensors[pad_id] = type(graph.tensors[pad_id])("p", (4, 2), "int32")
    assert select(graph.ops[0], graph) is None


@pytest.mark.skipif(not ctx.has_f16, reason="adapter lacks shader-f16")
def test_pad_fp16():
    graph = single_op_graph(
        "PADV2",
        [
            (1, 5, 6, 7),
            np.array([[0, 0], [1, 1], [0, 2], [0, 3]], np.int32),
            np.array(2.0, np.float32),
        ],
    )
    check_single_submit(graph, random_feeds(graph, np.random.default_rng(2)), "fp16")
