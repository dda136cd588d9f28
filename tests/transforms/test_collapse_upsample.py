"""collapse_upsample: Keras' nearest UpSampling2D (rank-5 RESHAPE + TILE chains) becomes
one RESIZE_NEAREST_NEIGHBOR; a rank-5 tile becomes a rank-4 TILE; other chains decline."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from engine.model.importer import load_tflite
from engine.model.ir import Graph, Op, Tensor
from engine.reference import Interpreter
from engine.transforms.collapse_upsample import collapse_upsample
from engine.transforms.fold_shapes import fold_shapes

FIXTURES = Path(__file__).resolve().parents[1] / "data" / "ops"


def _same(before: Graph, after: Graph) -> None:
    rng = np.random.default_rng(0)
    feeds = [rng.standard_normal(before.tensors[t].shape).astype(np.float32) for t in before.inputs]
    want, got = Interpreter(before).run(feeds), Interpreter(after).run(feeds)
    for name in want:
        np.testing.assert_array_equal(got[name], want[name])


def test_keras_upsampling_becomes_resize_nearest():
    graph = load_tflite(FIXTURES / "upsample_nearest.tflite")
    assert graph.op_histogram() == {"RESHAPE": 3, "CONV_2D": 2, "TILE": 2}
    after, result = collapse_upsample(graph)
    assert result.applied == 1 and not result.declined
    assert [op.type for op in after.ops] == ["CONV_2D", "RESIZE_NEAREST_NEIGHBOR", "CONV_2D"]
    resize = after.ops[1]
    np.testing.assert_array_equal(after.tensors[resize.inputs[1]].data, [24, 32])
    assert resize.attrs == {"align_corners": False, "half_pixel_centers": False}
    _same(graph, after)


def _chain(reshape_to, reps, back) -> Graph:
    """x [1, 4, 6, 3] -> RESHAPE reshape_to -> TILE reps -> RESHAPE back."""
    tiled = tuple(d * r for d, r in zip(reshape_to, reps, strict=True))
    tensors = [
        Tensor("x", (1, 4, 6, 3), "float32"),
        Tensor("s1", (5,), "int32", np.array(reshape_to, np.int32)),
        Tensor("r5", reshape_to, "float32"),
        Tensor("reps", (5,), "int32", np.array(reps, np.int32)),
        Tensor("t5", tiled, "float32"),
        Tensor("s2", (len(back),), "int32", np.array(back, np.int32)),
        Tensor("y", tuple(back), "float32"),
    ]
    ops = [Op("RESHAPE", (0, 1), (2,)), Op("TILE", (2, 3), (4,)), Op("RESHAPE", (4, 5), (6,))]
    return Graph(tensors, ops, [0], [6], "hand-made")


def test_rank5_tile_becomes_rank4_tile():
    graph = _chain((1, 1, 4, 6, 3), (2, 1, 1, 1, 1), (2, 4, 6, 3))
    after, result = collapse_upsample(graph)
    assert result.applied == 1
    assert [op.type for op in after.ops] == ["TILE"]
    np.testing.assert_array_equal(after.tensors[after.ops[0].inputs[1]].data, [2, 1, 1, 1])
    _same(graph, after)


def test_other_chains_decline_with_the_reason():
    # Repeats the channels block-wise inside each pixel: neither a resize nor a tile.
    graph = _chain((1, 4, 6, 3, 1), (1, 1, 1, 1, 2), (1, 4, 6, 6))
    after, result = collapse_upsample(graph)
    assert result.applied == 0
    assert "neither a nearest upsampling nor a tile" in result.declined[0]
    assert after.ops == graph.ops


def test_whole_pipeline_keeps_the_model_right():
    graph = load_tflite(FIXTURES / "upsample_nearest.tflite")
    after, _ = collapse_upsample(fold_shapes(graph)[0])
    _same(graph, after)
