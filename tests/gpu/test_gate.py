"""Engine.encode(encoder, gate=...): a model recorded behind a u32 word the GPU writes
(engine/gpu/gate.py): with the word set, the outputs are the plain encode's bit for bit;
with it 0, the model writes nothing; each gate word has its own indirect args."""

from __future__ import annotations

import numpy as np
import pytest

from engine.gpu import Engine
from tests.helpers.files import model_file
from tests.helpers.gpu import gpu_context

CTX = gpu_context()


@pytest.fixture(scope="module")
def engine():
    with Engine.from_tflite(model_file("face_detection_short_range"), context=CTX) as e:
        yield e


def _gate_buffer(*words):
    import wgpu

    usage = wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_DST
    return CTX.device.create_buffer_with_data(data=np.array(words, np.uint32), usage=usage)


def _outputs(engine) -> dict[str, bytes]:
    q = CTX.device.queue
    layouts = [engine.tensor_layout(engine.graph.tensors[t].name) for t in engine.graph.outputs]
    return {lay.name: bytes(q.read_buffer(lay.buffer, lay.offset, lay.size)) for lay in layouts}


def _clear_outputs(engine) -> None:
    for t in engine.graph.outputs:
        lay = engine.tensor_layout(engine.graph.tensors[t].name)
        CTX.device.queue.write_buffer(lay.buffer, lay.offset, np.zeros(lay.size, np.uint8))


def _encode(engine, gate=None) -> None:
    encoder = CTX.device.create_command_encoder()
    engine.encode(encoder, gate=gate)
    CTX.device.queue.submit([encoder.finish()])


def test_a_set_gate_runs_the_model_bit_for_bit(engine):
    x = np.random.default_rng(7).random((1, 128, 128, 3), np.float32)
    engine.run({"input": x})  # the input buffer holds x from here on
    _clear_outputs(engine)
    _encode(engine)
    want = _outputs(engine)
    gates = _gate_buffer(0, 1, 2, 0)  # any non-zero word runs it
    for offset in (4, 8):
        _clear_outputs(engine)
        _encode(engine, gate=(gates, offset))
        assert _outputs(engine) == want
        assert engine.stats.dispatches == len([d for s in engine.resources.segments
                                               for d in s.dispatches])  # fmt: skip


def test_a_zero_gate_leaves_the_outputs(engine):
    gates = _gate_buffer(1, 0, 0, 0)
    _clear_outputs(engine)
    _encode(engine, gate=(gates, 4))
    assert all(not any(raw) for raw in _outputs(engine).values())
    _encode(engine, gate=(gates, 0))  # the other word of the same buffer: its own args
    assert any(any(raw) for raw in _outputs(engine).values())


def test_a_gate_is_a_u32_word(engine):
    with pytest.raises(ValueError, match="not a multiple of 4"):
        _encode(engine, gate=(_gate_buffer(1, 1, 1, 1), 2))
