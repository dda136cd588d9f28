"""fold_shapes: shape arithmetic of a dynamic-batch model becomes constants; the folded
graph gives the same outputs; graph outputs and unknown values are left alone."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from engine.model.importer import load_tflite
from engine.model.ir import Graph, Op, Tensor
from engine.reference import Interpreter
from engine.transforms.fold_shapes import fold_shapes
from engine.transforms.resize_inputs import resize_inputs

FIXTURES = Path(__file__).resolve().parents[1] / "data" / "ops"
SHAPE_OPS = {"SHAPE", "STRIDED_SLICE", "PACK", "GATHER", "REDUCE_PROD", "CONCATENATION"}


def test_dynamic_batch_model_folds_every_shape_op():
    graph = resize_inputs(load_tflite(FIXTURES / "convnet_dynamic_batch.tflite"))
    folded, result = fold_shapes(graph)
    assert result.status == "applied" and result.applied == 14, result
    assert not result.declined
    left = [op.type for op in folded.ops if any(folded.tensors[t].dtype != "float32"
                                                 for t in op.outputs)]  # fmt: skip
    assert left == [] and not SHAPE_OPS & {op.type for op in folded.ops[:3]}
    x = np.random.default_rng(0).standard_normal((1, 24, 24, 3)).astype(np.float32)
    want, got = Interpreter(graph).run([x]), Interpreter(folded).run([x])
    for name in want:
        np.testing.assert_array_equal(got[name], want[name])


def _shape_graph(output_is_shape: bool) -> Graph:
    tensors = [
        Tensor("x", (2, 3, 4), "float32"),
        Tensor("shape", (3,), "int32"),
        Tensor("begin", (1,), "int32", np.array([1], np.int32)),
        Tensor("size", (1,), "int32", np.array([2], np.int32)),
        Tensor("hw", (2,), "int32"),
        Tensor("y", (2, 12), "float32"),
        Tensor("target", (2,), "int32", np.array([2, 12], np.int32)),
    ]
    ops = [
        Op("SHAPE", (0,), (1,), {"out_type": 2}),
        Op("SLICE", (1, 2, 3), (4,)),
        Op("RESHAPE", (0, 6), (5,)),
    ]
    outputs = [4] if output_is_shape else [5]
    return Graph(tensors, ops, [0], outputs, "hand-made")


def test_shape_then_slice_folds():
    folded, result = fold_shapes(_shape_graph(False))
    assert result.applied == 2
    assert [op.type for op in folded.ops] == ["RESHAPE"]
    np.testing.assert_array_equal(folded.tensors[4].data, [3, 4])


def test_declines_a_graph_output():
    _, result = fold_shapes(_shape_graph(True))
    assert result.applied == 1  # SHAPE only: SLICE writes the graph output
    assert result.declined == ["#1 SLICE: writes a graph output"]


def test_skips_ops_of_run_time_values():
    g = _shape_graph(False)
    g.ops.pop(0)  # SHAPE gone: the SLICE reads a tensor nobody folds
    g.ops.insert(0, Op("RELU", (0,), (1,)))
    _, result = fold_shapes(g)
    assert result.status == "skipped"
