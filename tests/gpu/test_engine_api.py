"""Engine API: one submit per run, sync modes, GPU-resident encode, input checks, planners."""

from __future__ import annotations

import numpy as np
import pytest

from engine.gpu.engine import Engine
from engine.reference import Interpreter
from tests.gpu.util import gpu_context
from tests.reference.single_op import random_feeds, single_op_graph

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
    import wgpu

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
    read = dev.create_buffer(
        size=dst.size, usage=wgpu.BufferUsage.MAP_READ | wgpu.BufferUsage.COPY_DST
    )
    encoder.copy_buffer_to_buffer(dst.buffer, dst.offset, read, 0, dst.size)
    dev.queue.submit([encoder.finish()])
    read.map_sync(wgpu.MapMode.READ)
    got = np.frombuffer(read.read_mapped(), np.float32).reshape(2, 9, 7, 4).copy()
    read.unmap()
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
