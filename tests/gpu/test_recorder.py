"""engine/gpu/recorder.py: dispatches recorded through wgpu-native's functions directly
give the same outputs as through wgpu-py's methods, and lose no validation error."""

from __future__ import annotations

import numpy as np
import pytest
import wgpu

from engine.gpu import recorder
from engine.gpu.engine import Engine
from engine.gpu.runtime import RunStats
from tests.helpers.files import model_file
from tests.helpers.gpu import gpu_context

CTX = gpu_context()


def test_the_direct_path_is_there():
    """This wgpu-py exposes what the direct calls need (else the engine runs slower)."""
    assert recorder.direct_functions() is not None
    engine = Engine.from_tflite(model_file("face_detection_short_range"))
    assert all(d.native is not None for s in engine.resources.segments for d in s.dispatches)


def test_direct_and_wgpu_py_recording_give_the_same_outputs():
    engine = Engine.from_tflite(model_file("selfie_segmentation"))
    rng = np.random.default_rng(3)
    feeds = {engine.graph.tensors[i].name: rng.uniform(0, 1, engine.graph.tensors[i].shape)
             .astype(np.float32) for i in engine.graph.inputs}  # fmt: skip
    engine.poison()  # a dispatch left out leaves NaN, not the last run's values
    direct = engine.run(feeds)
    dispatches = engine.stats.dispatches
    engine.runtime.direct_recording = False
    engine.poison()
    through_wgpu_py = engine.run(feeds)
    assert engine.stats.dispatches == dispatches
    for name, value in direct.items():
        np.testing.assert_array_equal(through_wgpu_py[name], value)


def test_a_bad_command_still_raises_when_the_encoder_finishes():
    engine = Engine.from_tflite(model_file("face_detection_short_range"))
    ds = [d for s in engine.resources.segments for d in s.dispatches]
    a = next(d for d in ds if d.kernel.startswith("depthwise"))
    b = next(d for d in ds if d.kernel.startswith("gemm") or d.kernel.startswith("conv1x1"))
    mismatched = type(a)(a.pipeline, b.group, a.grid)  # b's bind group, a's pipeline
    encoder = CTX.device.create_command_encoder()
    pass_ = encoder.begin_compute_pass()
    stats = RunStats()
    recorder.record(pass_, [mismatched], stats)
    pass_.end()
    assert stats.dispatches == 1
    with pytest.raises(wgpu.GPUValidationError, match="(?i)bind ?group"):
        encoder.finish()
