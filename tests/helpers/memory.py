"""A small hand-made graph whose usage records the memory tests know by heart."""

from __future__ import annotations

import numpy as np

from engine.model.ir import Graph, Op, Tensor


def small_graph() -> Graph:
    """in -> conv(w) -> a -> relu -> b -> add(a, b) -> c -> conv(w) -> out
    plus an extra output `d` of op 1 that nobody reads; `out` is the graph output."""
    w = np.ones((4, 1, 1, 3), np.float32)
    tensors = [
        Tensor("in", (1, 8, 8, 3), "float32"),  # 0 graph input
        Tensor("w", w.shape, "float32", w),  # 1 constant
        Tensor("a", (1, 8, 8, 4), "float32"),  # 2
        Tensor("b", (1, 8, 8, 4), "float32"),  # 3
        Tensor("d", (8, 5), "float32"),  # 4 written, never read
        Tensor("c", (1, 8, 8, 4), "float32"),  # 5
        Tensor("out", (1, 8, 8, 4), "float32"),  # 6 graph output
    ]
    ops = [
        Op("CONV_2D", (0, 1, -1), (2,)),
        Op("RELU", (2,), (3, 4)),
        Op("ADD", (2, 3), (5,)),
        Op("CONV_2D", (5, 1, -1), (6,)),
    ]
    return Graph(tensors, ops, inputs=[0], outputs=[6])
