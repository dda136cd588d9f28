"""Whole models on the GPU vs the reference interpreter, under both storage kinds
(buffers, textures) and every memory plan."""

from __future__ import annotations

import numpy as np
import pytest

from engine.gpu.engine import Engine
from engine.memory import planners_for
from engine.model.importer import load_tflite
from engine.reference import Interpreter
from tests.helpers.files import CORE_MODELS, model_file
from tests.helpers.gpu import STORAGES, gpu_context

ctx = gpu_context()

PLANNERS = planners_for("buffer")  # every planner of the registry, by the kinds it plans
TEXTURE_PLANNERS = tuple(f"texture_{name}" for name in planners_for("texture"))


def _feeds(graph, rng):
    return {
        graph.tensors[t].name: rng.uniform(-1, 1, graph.tensors[t].shape).astype(np.float32)
        for t in graph.inputs
    }


def _astronaut_feeds(graph, rgb):
    import cv2

    (t,) = graph.inputs
    _, h, w, _ = graph.tensors[t].shape
    x = cv2.resize(rgb, (w, h), interpolation=cv2.INTER_AREA).astype(np.float32) / 255.0
    return {graph.tensors[t].name: x[None]}


def _assert_close(got: dict, want: dict, tol: float) -> None:
    for name, ref in want.items():
        scale = max(1.0, float(np.abs(ref).max()))
        err = float(np.abs(got[name] - ref).max())
        assert err <= tol * scale, f"{name}: max|diff| {err:.3g} > {tol * scale:.3g}"


def _assert_mostly_textures(engine) -> None:
    """Texture storage: most intermediates are textures (the rest: ops without texture
    kernels, e.g. RESHAPE, RESIZE_BILINEAR, transpose conv)."""
    n = len(engine.placement.textures)
    assert n >= 2 * len(engine.placement.reasons), (n, engine.placement.reasons)
    assert engine.texture_memory is not None


@pytest.mark.parametrize("storage", STORAGES)
@pytest.mark.parametrize("name", CORE_MODELS)
def test_core_model_matches_reference(name, storage, astronaut_rgb):
    graph = load_tflite(model_file(name))
    engine = Engine(graph, storage=storage)
    assert engine.storage == storage
    if storage == "texture":
        _assert_mostly_textures(engine)
    assert engine.fallback_ops == [], f"ops on the CPU: {engine.fallback_ops}"
    reference = Interpreter(graph)
    for feeds in (_feeds(graph, np.random.default_rng(0)), _astronaut_feeds(graph, astronaut_rgb)):
        engine.poison()
        _assert_close(engine.run(feeds), reference.run(feeds), 1e-4)
    # one submit, and the adapter class's early ones (engine/gpu/submits.py): no CPU wait
    assert engine.stats.submits == 1 + len(engine.runtime.submits.points(engine.stats.dispatches))
    # Transforms fuse activations, residual adds and channel pads: 90 -> 46 ops on face
    # detection, 97 -> 51 face_landmark, 136 -> 80 selfie (dispatches: docs/benchmarks.md).
    assert len(engine.graph.ops) <= 0.6 * len(graph.ops), "transforms should fuse ~half the ops"


# Each model's eight engines are a cold compile (face_landmark 85-110 s, face detection
# 42-51 s on CI's 2 cores): the slow tier runs the three; the default tier checks the rule
# on selfie_segmentation, the model with the most tensors to place
PLANNER_MODELS = [m if m == "selfie_segmentation" else pytest.param(m, marks=pytest.mark.slow)
                  for m in CORE_MODELS]  # fmt: skip


@pytest.mark.parametrize("name", PLANNER_MODELS)
def test_every_planner_gives_identical_outputs(name):
    graph = load_tflite(model_file(name))
    feeds = _feeds(graph, np.random.default_rng(1))
    outputs = {}
    for planner in PLANNERS:
        engine = Engine(graph, planner=planner, storage="buffer")
        engine.poison()
        outputs[planner] = engine.run(feeds)
        assert engine.memory.strategy == planner
    # Texture storage: same kernels, same arithmetic -> bit-identical outputs too.
    for planner in TEXTURE_PLANNERS:
        engine = Engine(graph, texture_planner=planner, storage="texture")
        engine.poison()
        outputs[planner] = engine.run(feeds)
        assert engine.texture_memory.strategy == planner
        assert engine.memory.strategy.endswith(planner)
        m, b, t = engine.memory, engine.buffer_memory, engine.texture_memory
        assert m.total_bytes == b.total_bytes + t.total_bytes >= m.lower_bound > 0
        assert m.objects == b.objects + t.objects
    for planner in PLANNERS[1:] + TEXTURE_PLANNERS:
        for key, value in outputs["naive"].items():
            assert np.array_equal(outputs[planner][key], value), f"{planner} differs on {key}"


# fp16 against LiteRT on every core model is in the default tier (test_litert_models.py,
# storage "auto"); here both storage kinds against the reference, face detection by
# default, the other two models (a cold fp16 compile each, 70 s on CI's 2 cores) slow
FP16_MODELS = [m if m == "face_detection_short_range" else pytest.param(m, marks=pytest.mark.slow)
               for m in CORE_MODELS]  # fmt: skip


@pytest.mark.skipif(not ctx.has_f16, reason="adapter lacks shader-f16")
@pytest.mark.parametrize("storage", STORAGES)
@pytest.mark.parametrize("name", FP16_MODELS)
def test_core_model_fp16(name, storage, astronaut_rgb):
    """fp16 storage (f32 weights and accumulators in the convs) stays within 5e-3."""
    graph = load_tflite(model_file(name))
    engine = Engine(graph, precision="fp16", storage=storage)
    if storage == "texture":
        _assert_mostly_textures(engine)
    assert engine.fallback_ops == []
    feeds = _astronaut_feeds(graph, astronaut_rgb)
    got, want = engine.run(feeds), Interpreter(graph).run(feeds)
    if name != "selfie_segmentation":
        _assert_close(got, want, 5e-3)
        return
    # A probability mask: fp16 rounding moves pixels near the 0.5 edge the most
    # (max diff ~0.07 there); the mask itself must stay the same.
    (mask,) = got.values()
    (ref,) = want.values()
    assert float(np.abs(mask - ref).mean()) < 2e-3
    inter = np.logical_and(mask > 0.5, ref > 0.5).sum()
    union = np.logical_or(mask > 0.5, ref > 0.5).sum()
    assert inter / union >= 0.99


def test_squeeze_excite_gate_fused_into_conv1x1():
    """selfie_segmentation's SE blocks: the gate MULs run inside the next 1x1 conv."""
    graph = load_tflite(model_file("selfie_segmentation"))
    engine = Engine(graph)
    fused = [op for op in engine.graph.ops if "input_scale" in op.attrs]
    assert fused and engine.fallback_ops == []
    feeds = _feeds(graph, np.random.default_rng(4))
    _assert_close(engine.run(feeds), Interpreter(graph).run(feeds), 1e-4)
