"""Graph.consumers(): kept between calls, rebuilt whenever the ops change."""

import pickle
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.model.builder import GraphBuilder
from engine.model.ir import Graph, tensors_read
from tests.memory.schedules import random_graphs


def recount(graph: Graph) -> dict[int, tuple[int, ...]]:
    """The readers of each tensor, counted from scratch."""
    found: dict[int, list[int]] = {}
    for i, op in enumerate(graph.ops):
        for t in tensors_read(op):
            found.setdefault(t, []).append(i)
    return {t: tuple(r) for t, r in found.items()}


def chain() -> Graph:
    b = GraphBuilder("chain")
    x = b.tensor((1, 4, 4, 8), name="x")
    y = b.op("RELU", (x,))
    z = b.op("ADD", (y, x), fused_activation_function="NONE")
    w = b.op("RELU", (z,))
    return b.graph([x], [w])


def test_consumers_follow_in_place_changes_of_the_ops():
    g = chain()
    first = g.consumers()
    assert dict(first) == recount(g) and g.consumers() == first
    g.ops[2] = replace(g.ops[2], inputs=(0,))  # the last RELU reads x now
    assert dict(g.consumers()) == recount(g) and g.consumers()[0] == (0, 1, 2)
    g.ops.append(replace(g.ops[0]))  # a new op object, same fields
    assert dict(g.consumers()) == recount(g) and g.consumers()[0] == (0, 1, 2, 3)
    del g.ops[1]
    assert dict(g.consumers()) == recount(g)


def test_consumers_are_read_only_and_the_graph_still_pickles():
    g = chain()
    with pytest.raises(TypeError):
        g.consumers()[0] = (5,)  # type: ignore[index]
    copy = pickle.loads(pickle.dumps(g))
    assert dict(copy.consumers()) == recount(g)
    assert np.array_equal(copy.tensors[0].shape, g.tensors[0].shape)


@settings(max_examples=40, deadline=None)
@given(random_graphs(), st.data())
def test_consumers_match_a_recount_after_random_edits(graph, data):
    graph.consumers()
    for _ in range(data.draw(st.integers(1, 4))):
        i = data.draw(st.integers(0, len(graph.ops) - 1))
        edit = data.draw(st.sampled_from(["drop", "copy", "swap"]))
        if edit == "drop" and len(graph.ops) > 1:
            del graph.ops[i]
        elif edit == "copy":
            graph.ops.insert(i, replace(graph.ops[i]))
        else:
            j = data.draw(st.integers(0, len(graph.ops) - 1))
            graph.ops[i], graph.ops[j] = graph.ops[j], graph.ops[i]
        assert dict(graph.consumers()) == recount(graph)
