"""The `gl` tier: the engine on wgpu's OpenGL (GLES) backend, the adapter it takes where
there is no Vulkan/Metal/D3D12 driver (Mesa's llvmpipe through EGL here and in CI).
Buffers are right there and checked against LiteRT; 2-D array texture storage is not
(wgpu binds only layer 0: face detection came out 1.8e13 off) and must be refused with
an error naming the option and the backend; storage "auto" and "tune" give buffers."""

from __future__ import annotations

import numpy as np
import pytest

from engine.catalog.manifest import load_manifest
from engine.errors import DeviceError
from engine.gpu.engine import Engine
from engine.gpu.storage_choice import resolve_storage
from engine.model.importer import load_tflite
from tests.helpers.files import CORE_MODELS, model_file
from tests.helpers.gpu import conv_attrs, gl_context
from tests.helpers.single_op import random_feeds, single_op_graph

ctx = gl_context()
pytest.importorskip("ai_edge_litert")


def _conv_graph():
    rng = np.random.default_rng(3)
    weights = rng.standard_normal((6, 3, 3, 5)).astype(np.float32)
    return single_op_graph("CONV_2D", [(1, 9, 8, 5), weights, None], conv_attrs())


@pytest.mark.parametrize("name", CORE_MODELS)
def test_buffers_on_gl_match_litert(name):
    from benchmarks.engine.precision_check import check_model

    model_file(name)
    rows = check_model(load_manifest().get(name), "fp32", floor=False, context=ctx)
    bad = [r for r in rows if not r.ok]
    assert rows and not bad, [(r.output, r.error) for r in bad]


def test_single_op_on_gl_matches_the_reference():
    """A conv whose output spans two channel slices (the layer textures got wrong)."""
    from engine.reference import Interpreter

    graph = _conv_graph()
    feeds = random_feeds(graph, np.random.default_rng(4))
    engine = Engine(graph, context=ctx)
    assert engine.storage == "buffer"
    engine.poison()
    (got,), (want,) = engine.run(feeds).values(), Interpreter(graph).run(feeds).values()
    assert np.abs(got - want).max() <= 1e-4 * max(1.0, np.abs(want).max())


def test_auto_and_tune_storage_on_gl_are_buffers(tmp_path):
    assert resolve_storage("auto", ctx, "fp32") == "buffer"
    engine = Engine(_conv_graph(), context=ctx, storage="tune", cache_dir=tmp_path)
    assert engine.storage == "buffer"
    assert not list(tmp_path.rglob("*.json"))  # nothing measured: textures are no option


@pytest.mark.parametrize("how", ["option", "environment"])
def test_texture_storage_on_gl_is_refused(how, monkeypatch):
    from engine import config

    if how == "environment":
        monkeypatch.setenv("ENGINE_STORAGE", "texture")
        config.reload()
    storage = "texture" if how == "option" else "auto"
    want = "storage='texture'" if how == "option" else "ENGINE_STORAGE=texture"
    with pytest.raises(DeviceError, match=rf"{want} on .*\(OpenGL\): .*wrong results"):
        Engine(load_tflite(model_file("face_detection_short_range")), context=ctx,
               storage=storage)  # fmt: skip
