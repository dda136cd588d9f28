"""Folded texture tensors (texture_arena plans): kernels, views and transfers address the
tiles and layers the plan gives each tensor, bit for bit as the buffer path."""

from __future__ import annotations

import numpy as np
import pytest

from engine.gpu.engine import Engine
from engine.model.importer import load_tflite
from engine.model.ir import Graph, Op, Tensor, tensors_read
from engine.reference import Interpreter
from tests.helpers.files import model_file
from tests.helpers.gpu import gpu_context

CTX = gpu_context()


def _pool_mean_relu() -> Graph:
    """x -> RELU -> a (8x8, 4 slices) -> MAX_POOL 2x2/2 -> b (4x4, 4 slices) -> REDUCE_PROD
    over H (no GPU kernel: CPU) -> c (4x1, 4 slices) -> RELU -> y. One 8x8 object holds them all:
    b is 2 x 2 slices per layer (written by a kernel, read by the CPU op), c 2 x 2 too
    (written by the CPU op, read by a kernel)."""
    tensors = [
        Tensor("x", (1, 8, 8, 16), "float32"),
        Tensor("a", (1, 8, 8, 16), "float32"),
        Tensor("b", (1, 4, 4, 16), "float32"),
        Tensor("axis", (1,), "int32", np.array([1], np.int32)),
        Tensor("c", (1, 1, 4, 16), "float32"),
        Tensor("y", (1, 1, 4, 16), "float32"),
    ]
    pool = {"padding": "VALID", "stride_w": 2, "stride_h": 2, "filter_width": 2,
            "filter_height": 2, "fused_activation_function": "NONE"}  # fmt: skip
    ops = [
        Op("RELU", (0,), (1,), {}),
        Op("MAX_POOL_2D", (1,), (2,), pool),
        Op("REDUCE_PROD", (2, 3), (4,), {"keep_dims": True}),
        Op("RELU", (4,), (5,), {}),
    ]
    return Graph(tensors, ops, [0], [5], name="pool_mean_relu")


def test_cpu_fallback_reads_and_writes_folded_textures():
    graph = _pool_mean_relu()
    engine = Engine(graph, storage="texture", texture_planner="arena", transforms=False)
    assert engine.fallback_ops == ["#2 REDUCE_PROD"]
    plan = engine.texture_memory.plan
    assert plan.objects == 1 and plan.tiles[2] == (2, 2) and plan.tiles[4] == (2, 2)
    feeds = {"x": np.random.default_rng(8).standard_normal((1, 8, 8, 16)).astype(np.float32)}
    engine.poison()
    got = engine.run(feeds)["y"]
    np.testing.assert_allclose(got, Interpreter(graph).run(feeds)["y"], atol=1e-6)
    buffers = Engine(graph, storage="buffer", transforms=False).run(feeds)["y"]
    assert np.array_equal(got, buffers)


def _shares_an_object_in_one_dispatch(engine) -> bool:
    """Some op reads one texture tensor and writes another of the same object."""
    where = engine.texture_memory.plan.assignment
    for op in engine.graph.ops:
        read = {where[t] for t in tensors_read(op) if t in where}
        if any(where.get(t) in read for t in op.outputs):
            return True
    return False


# Two cold fp16 compiles of selfie_segmentation: 66-150 s on CI's 2 cores. The default tier
# keeps folded textures through test_cpu_fallback_reads_and_writes_folded_textures and fp16
# texture storage through tests/gpu/test_models.py::test_core_model_fp16.
@pytest.mark.slow
@pytest.mark.skipif(not CTX.has_f16, reason="adapter lacks shader-f16")
def test_folded_fp16_textures_match_buffers_bitwise():
    """selfie_segmentation at fp16 (textures are the lavapipe default there): three
    objects, tensors folded 2x2 to 16x16 slices per layer."""
    graph = load_tflite(model_file("selfie_segmentation"))
    rng = np.random.default_rng(9)
    (t,) = graph.inputs
    feeds = {graph.tensors[t].name: rng.uniform(0, 1, graph.tensors[t].shape).astype(np.float32)}
    folded = Engine(graph, precision="fp16", storage="texture", texture_planner="arena")
    plan = folded.texture_memory.plan
    assert max(a * b for a, b in plan.tiles.values()) >= 16
    assert _shares_an_object_in_one_dispatch(folded)
    assert folded.texture_memory.ratio < 1.05  # vs 1.70 with whole shared textures
    folded.poison()
    got = folded.run(feeds)
    want = Engine(graph, precision="fp16", storage="buffer").run(feeds)
    for name, value in want.items():
        assert np.array_equal(got[name], value), name
