"""Engine API: one submit per run, sync modes, GPU-resident encode, input checks, planners."""

from __future__ import annotations

import numpy as np
import pytest

from engine.gpu.engine import Engine
from engine.model.ir import Graph, Op, Tensor
from engine.reference import Interpreter
from tests.helpers.gpu import gpu_context
from tests.helpers.single_op import random_feeds, single_op_graph

CTX = gpu_context()
ATTRS = {"padding": "SAME", "stride_w": 1, "stride_h": 1, "fused_activation_function": "RELU"}


def _graph(rng):
    w = rng.standard_normal((6, 3, 3, 5)).astype(np.float32)
    return single_op_graph("CONV_2D", [(1, 9, 7, 5), w, None], ATTRS)


def _to_phwc4(x: np.ndarray) -> np.ndarray:
    _, h, w, c = x.shape
    s = -(-c // 4)
    padded = np.zeros((h, w, s * 4), np.float32)
    padded[:, :, :c] = x[0]
    return np.ascontiguousarray(padded.reshape(h, w, s, 4).transpose(2, 0, 1, 3))


def _submit_and_read(encoder, layout) -> np.ndarray:
    """Copy `layout`'s bytes out after the encoded work, submit, map: float32, flat."""
    import wgpu

    dev = CTX.device
    read = dev.create_buffer(
        size=layout.size, usage=wgpu.BufferUsage.MAP_READ | wgpu.BufferUsage.COPY_DST
    )
    encoder.copy_buffer_to_buffer(layout.buffer, layout.offset, read, 0, layout.size)
    dev.queue.submit([encoder.finish()])
    read.map_sync(wgpu.MapMode.READ)
    data = np.frombuffer(read.read_mapped(), np.float32).copy()
    read.unmap()
    return data


@pytest.mark.parametrize("sync", ["sleep", "spin"])
def test_sync_modes_give_the_same_result(sync):
    rng = np.random.default_rng(0)
    graph = _graph(rng)
    feeds = random_feeds(graph, rng)
    engine = Engine(graph, sync=sync)
    out = engine.run(feeds)["output0"]
    np.testing.assert_allclose(out, Interpreter(graph).run(feeds)["output0"], atol=1e-5)
    stats = engine.stats
    assert (stats.submits, stats.uploads, stats.readbacks) == (1, 1, 1)
    assert stats.wait_ms >= 0 and stats.wait_cpu_ms >= 0


def test_encode_runs_on_gpu_resident_buffers_without_transfers():
    rng = np.random.default_rng(1)
    graph = _graph(rng)
    feeds = random_feeds(graph, rng)
    engine = Engine(graph)
    dev = CTX.device
    src = engine.tensor_layout("input0")
    dst = engine.tensor_layout("output0")
    assert src.phwc4 == (1, 9, 7, 5) and src.slices == 2
    dev.queue.write_buffer(src.buffer, src.offset, _to_phwc4(feeds["input0"]))
    encoder = dev.create_command_encoder()
    stats = engine.encode(encoder)
    got = _submit_and_read(encoder, dst).reshape(2, 9, 7, 4)
    want = _to_phwc4(Interpreter(graph).run(feeds)["output0"])
    np.testing.assert_allclose(got, want, atol=1e-5)
    assert (stats.uploads, stats.readbacks) == (0, 0) and stats.dispatches >= 1


def test_bad_inputs_name_the_input():
    rng = np.random.default_rng(2)
    engine = Engine(_graph(rng))
    with pytest.raises(ValueError, match="missing input 'input0'"):
        engine.run({})
    with pytest.raises(ValueError, match="input 'input0': shape"):
        engine.run({"input0": np.zeros((1, 9, 7, 4), np.float32)})
    with pytest.raises(ValueError, match="input 'input0': dtype"):
        engine.run({"input0": np.zeros((1, 9, 7, 5), np.int32)})
    with pytest.raises(ValueError, match="unknown inputs"):
        engine.run({"input0": np.zeros((1, 9, 7, 5), np.float32), "other": 1})
    with pytest.raises(ValueError, match="sync"):
        engine.run({"input0": np.zeros((1, 9, 7, 5), np.float32)}, sync="nap")


def test_unknown_planner_is_rejected():
    with pytest.raises(ValueError, match="planner"):
        Engine(_graph(np.random.default_rng(3)), planner="magic")


# --- storage kinds -----------------------------------------------------------------------
def _relu_mean_relu():
    """x -> RELU -> t1 -> REDUCE_PROD over channels (no GPU kernel: CPU) -> t2 -> RELU -> y."""
    from engine.model.ir import Graph, Op, Tensor

    axis = np.array([3], np.int32)
    tensors = [
        Tensor("x", (1, 4, 5, 6), "float32"),
        Tensor("t1", (1, 4, 5, 6), "float32"),
        Tensor("axis", (1,), "int32", axis),
        Tensor("t2", (1, 4, 5, 1), "float32"),
        Tensor("y", (1, 4, 5, 1), "float32"),
    ]
    ops = [
        Op("RELU", (0,), (1,), {}),
        Op("REDUCE_PROD", (1, 2), (3,), {"keep_dims": True}),
        Op("RELU", (3,), (4,), {}),
    ]
    return Graph(tensors, ops, [0], [4], name="relu_mean_relu")


def test_cpu_fallback_reads_and_writes_textures():
    graph = _relu_mean_relu()
    engine = Engine(graph, storage="texture", transforms=False)
    assert engine.fallback_ops == ["#1 REDUCE_PROD"]
    assert engine.placement.textures == {1, 3}  # CPU ops take either kind
    feeds = {"x": np.random.default_rng(5).standard_normal((1, 4, 5, 6)).astype(np.float32)}
    engine.poison()
    got = engine.run(feeds)["y"]
    np.testing.assert_allclose(got, Interpreter(graph).run(feeds)["y"], atol=1e-6)
    assert engine.stats.submits == 2


@pytest.mark.skipif(not CTX.has_f16, reason="adapter lacks shader-f16")
def test_cpu_fallback_textures_fp16():
    graph = _relu_mean_relu()
    engine = Engine(graph, storage="texture", precision="fp16", transforms=False)
    feeds = {"x": np.random.default_rng(6).standard_normal((1, 4, 5, 6)).astype(np.float32)}
    got = engine.run(feeds)["y"]
    np.testing.assert_allclose(got, Interpreter(graph).run(feeds)["y"], atol=5e-3)


def test_encode_with_texture_intermediates():
    """conv -> (texture) -> RELU: inputs/outputs stay buffers for the caller."""
    from engine.model.ir import Op, Tensor

    rng = np.random.default_rng(7)
    graph = _graph(rng)
    graph.tensors.append(Tensor("relu", (1, 9, 7, 6), "float32"))
    graph.ops.append(Op("RELU", (graph.outputs[0],), (len(graph.tensors) - 1,), {}))
    graph.outputs = [len(graph.tensors) - 1]
    feeds = random_feeds(graph, rng)
    engine = Engine(graph, storage="texture", transforms=False)
    assert len(engine.placement.textures) == 1 and engine.texture_memory is not None
    dev = CTX.device
    src, dst = engine.tensor_layout("input0"), engine.tensor_layout("relu")
    dev.queue.write_buffer(src.buffer, src.offset, _to_phwc4(feeds["input0"]))
    encoder = dev.create_command_encoder()
    engine.encode(encoder)
    got = _submit_and_read(encoder, dst).reshape(2, 9, 7, 4)
    np.testing.assert_allclose(got, _to_phwc4(Interpreter(graph).run(feeds)["relu"]), atol=1e-5)


def test_storage_auto_is_the_adapter_rule_and_env_overrides_it(monkeypatch):
    from engine import config
    from engine.gpu.storage_choice import default_storage, resolve_storage

    monkeypatch.delenv("ENGINE_STORAGE", raising=False)
    config.reload()
    engine = Engine(_graph(np.random.default_rng(8)))  # storage="auto" by default
    assert engine.storage_requested == "auto"
    assert engine.storage == default_storage(CTX.info, "fp32")
    if CTX.info.get("adapter_type") == "CPU":  # lavapipe: buffers at fp32, textures at fp16
        assert engine.storage == "buffer" and default_storage(CTX.info, "fp16") == "texture"
    monkeypatch.setenv("ENGINE_STORAGE", "texture")
    config.reload()
    assert resolve_storage("auto", CTX, "fp32") == "texture"
    assert resolve_storage("buffer", CTX, "fp32") == "buffer"  # an explicit kind wins


def test_storage_tune_measures_once_and_caches(tmp_path, monkeypatch):
    from engine.gpu import storage_probe

    first = storage_probe.probe_result(CTX, "fp32", cache_dir=tmp_path, refresh=True)
    assert first["kind"] in ("buffer", "texture")
    assert first["buffer_ms"] > 0 and first["texture_ms"] > 0
    (path,) = tmp_path.glob("*.json")
    monkeypatch.setattr(storage_probe, "_choices", {})  # a new process: from the file
    monkeypatch.setattr(storage_probe, "measure", lambda *a: pytest.fail("measured again"))
    assert storage_probe.probe_result(CTX, "fp32", cache_dir=tmp_path) == first
    engine = Engine(_graph(np.random.default_rng(8)), storage="tune", cache_dir=tmp_path / "root")
    assert engine.storage_requested == "tune" and engine.storage in ("buffer", "texture")
    assert path.exists()


def test_unknown_storage_is_rejected():
    with pytest.raises(ValueError, match="storage"):
        Engine(_graph(np.random.default_rng(3)), storage="image")
    with pytest.raises(ValueError, match="texture_planner"):
        Engine(_graph(np.random.default_rng(3)), storage="texture", texture_planner="mincostflow")


def test_a_second_engine_on_the_device_reuses_every_pipeline():
    from engine.gpu.device import GpuContext

    rng = np.random.default_rng(7)
    graph = _graph(rng)
    feeds = random_feeds(graph, rng)
    ctx = GpuContext(CTX.adapter, CTX.device, CTX.features, CTX.limits)  # empty cache
    first = Engine(graph, context=ctx)
    second = Engine(graph, context=ctx)
    assert first.pipeline_stats["compiled"] > 0 and first.pipeline_stats["reused"] == 0
    assert second.pipeline_stats == {"compiled": 0, "reused": first.pipeline_stats["compiled"]}
    np.testing.assert_array_equal(first.run(feeds)["output0"], second.run(feeds)["output0"])


def test_a_second_engine_shares_every_weight_buffer():
    from engine.gpu.device import GpuContext

    rng = np.random.default_rng(9)
    graph = _graph(rng)
    feeds = random_feeds(graph, rng)
    ctx = GpuContext(CTX.adapter, CTX.device, CTX.features, CTX.limits)  # empty caches
    first = Engine(graph, context=ctx)
    held = ctx.weights.stats()
    assert held["buffers"] > 0 and held["hits"] + held["misses"] >= held["buffers"]
    with Engine(graph, context=ctx) as second:
        after = ctx.weights.stats()
        assert (after["buffers"], after["bytes"]) == (held["buffers"], held["bytes"])
        assert after["misses"] == held["misses"]  # nothing uploaded again
        np.testing.assert_array_equal(first.run(feeds)["output0"], second.run(feeds)["output0"])
    assert ctx.weights.stats()["buffers"] == held["buffers"]  # the first engine still holds them
    first.close()
    assert ctx.weights.stats()["buffers"] == 0
    third = Engine(graph, context=ctx)  # uploads again, still right
    np.testing.assert_array_equal(third.run(feeds)["output0"], second.run(feeds)["output0"])


def test_a_large_output_converts_in_a_2d_grid():
    """Over 65535 groups of 64 along x (> 4,194,240 elements) the I/O conversions use rows
    of groups: a 1x128x128x260 tensor in and out through a RELU."""
    from engine.gpu.io import conversion_grid

    assert conversion_grid(128 * 128 * 260) == (32768, 3, 1)  # 66560 groups
    shape = (1, 128, 128, 260)
    graph = Graph([Tensor("x", shape, "float32"), Tensor("y", shape, "float32")],
                  [Op("RELU", (0,), (1,), {})], [0], [1], name="large")  # fmt: skip
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    np.testing.assert_array_equal(Engine(graph).run({"x": x})["y"], np.maximum(x, 0))


def test_from_tflite_reports_the_file_first_then_the_device(tmp_path):
    """from_tflite: a bad file raises its ModelError whatever the adapter, a device that
    cannot be made its DeviceError; engines share the process's context and compute what
    an engine over the same graph computes."""
    from engine.errors import DeviceError, ModelError
    from engine.gpu.device import shared_context
    from engine.model.importer import load_tflite
    from tests.helpers.latency import tiny_cell_model

    model = tiny_cell_model(tmp_path)
    bad = tmp_path / "bad.tflite"
    bad.write_bytes(b"not a model at all")
    with pytest.raises(ModelError, match="bad.tflite"):
        Engine.from_tflite(bad, adapter="no-such-adapter")
    with pytest.raises(DeviceError, match="no WebGPU adapter matches 'no-such-adapter'"):
        Engine.from_tflite(model, adapter="no-such-adapter")
    engine = Engine.from_tflite(model)
    assert engine.ctx is shared_context()
    feeds = random_feeds(engine.graph, np.random.default_rng(3))
    want = Engine(load_tflite(model), context=shared_context()).run(feeds)
    for name, value in engine.run(feeds).items():
        np.testing.assert_array_equal(value, want[name])
