"""Engine(kernels="staged"): the compact set's outputs at once, the optimized set's after the
swap, each exactly what an engine of that set gives (engine/gpu/staged.py)."""

from __future__ import annotations

import numpy as np
import pytest

from engine.gpu.engine import Engine
from tests.helpers.files import model_file
from tests.helpers.gpu import gpu_context
from tests.helpers.seeds import rng_for

CTX = gpu_context()
MODEL = "face_detection_short_range"
BUILD_S = 600  # only a hung build waits this long


def _feeds(engine, rng):
    g = engine.source_graph
    return [rng.random(g.tensors[t].shape, dtype=np.float32) for t in g.inputs]


def test_staged_gives_each_sets_outputs_before_and_after_the_swap(request):
    path = model_file(MODEL)
    feeds = _feeds(Engine.from_tflite(path, context=CTX), rng_for(request.node.nodeid))
    compact = Engine.from_tflite(path, context=CTX, kernels="compact").run(feeds)
    optimized = Engine.from_tflite(path, context=CTX, kernels="optimized").run(feeds)
    assert any(not np.array_equal(compact[k], optimized[k]) for k in compact)  # two sets

    staged = Engine.from_tflite(path, context=CTX, kernels="staged")
    assert staged.kernels == "staged" and staged.kernels_running == "compact"
    first = staged.run(feeds)
    assert staged.kernels_running == "compact" or staged.optimized_ready()
    want = compact if staged.kernels_running == "compact" else optimized
    assert all(np.array_equal(first[k], want[k]) for k in want)

    assert staged.wait_optimized(BUILD_S)
    assert staged.kernels_running == "optimized" and staged.staged_error is None
    assert staged.init_ms["optimized_ready"] > 0
    after = staged.run(feeds)
    assert all(np.array_equal(after[k], optimized[k]) for k in optimized)
    staged.close()


def test_staged_refuses_the_encode_path():
    staged = Engine.from_tflite(model_file(MODEL), context=CTX, kernels="staged")
    name = staged.graph.tensors[staged.graph.inputs[0]].name
    with pytest.raises(ValueError, match="kernels='staged' replaces the engine's buffers"):
        staged.tensor_layout(name)
    with pytest.raises(ValueError, match="encode"):
        staged.encode(CTX.device.create_command_encoder())
    staged.close()


def test_unknown_kernels_is_a_clear_error():
    with pytest.raises(ValueError, match=r"kernels must be one of \('staged', 'optimized'"):
        Engine.from_tflite(model_file(MODEL), context=CTX, kernels="fastest")
