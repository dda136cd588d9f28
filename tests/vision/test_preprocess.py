"""RGBA frame texture -> model input on the GPU, then the model, without readbacks."""

from __future__ import annotations

import numpy as np

from engine.gpu.engine import Engine
from engine.model.importer import load_tflite
from engine.reference import Interpreter
from engine.vision.blazeface import detect_faces, letterbox, letterbox_matrix
from engine.vision.preprocess import Preprocessor
from tests.conftest import model_file
from tests.gpu.util import gpu_context

CTX = gpu_context()


def _frame_texture(rgb: np.ndarray):
    import wgpu

    h, w, _ = rgb.shape
    rgba = np.concatenate([rgb, np.full((h, w, 1), 255, np.uint8)], axis=2)
    tex = CTX.device.create_texture(
        size=(w, h, 1),
        format=wgpu.TextureFormat.rgba8unorm,
        usage=wgpu.TextureUsage.TEXTURE_BINDING | wgpu.TextureUsage.COPY_DST,
    )
    CTX.device.queue.write_texture(
        {"texture": tex},
        np.ascontiguousarray(rgba),
        {"bytes_per_row": w * 4, "rows_per_image": h},
        (w, h, 1),
    )
    return tex


def test_letterbox_on_gpu_then_face_detection(astronaut_rgb):
    """Frame 640x480-like (a crop of the still) -> letterbox 128x128 [-1,1] -> model on GPU."""
    import wgpu

    frame = np.ascontiguousarray(astronaut_rgb[:384, :])  # 512x384: letterbox adds borders
    graph = load_tflite(model_file("face_detection_short_range"))
    engine = Engine(graph)
    pre = Preprocessor(engine, "input", value_range=(-1.0, 1.0))
    pre.set_roi(letterbox_matrix((frame.shape[1], frame.shape[0]), (128, 128)))
    view = _frame_texture(frame).create_view()
    encoder = CTX.device.create_command_encoder()
    pre.encode(encoder, view)
    stats = engine.encode(encoder)
    outs = {}
    reads = []
    for name in ("regressors", "classificators"):
        lay = engine.tensor_layout(name)
        read = CTX.device.create_buffer(
            size=lay.size, usage=wgpu.BufferUsage.MAP_READ | wgpu.BufferUsage.COPY_DST
        )
        encoder.copy_buffer_to_buffer(lay.buffer, lay.offset, read, 0, lay.size)
        reads.append((name, lay, read))
    CTX.device.queue.submit([encoder.finish()])
    assert (stats.uploads, stats.readbacks) == (0, 0)
    for name, lay, read in reads:
        read.map_sync(wgpu.MapMode.READ)
        b, h, w, c = lay.phwc4
        phwc4 = np.frombuffer(read.read_mapped(), np.float32).reshape(lay.slices, h, w, 4).copy()
        read.unmap()
        outs[name] = phwc4.transpose(1, 2, 0, 3).reshape(h, w, -1)[:, :, :c].reshape(lay.shape)
    # The same frame through the CPU letterbox and the reference interpreter.
    tensor, frame_from_tensor = letterbox(frame, (128, 128))
    want = Interpreter(graph).run({"input": tensor})
    got_faces = detect_faces(outs["regressors"], outs["classificators"], frame_from_tensor)
    want_faces = detect_faces(want["regressors"], want["classificators"], frame_from_tensor)
    assert len(got_faces.boxes) == len(want_faces.boxes) == 1
    from engine.vision.blazeface import iou

    assert iou(got_faces.boxes[0], want_faces.boxes)[0] >= 0.9


def test_preprocess_matches_cpu_letterbox(astronaut_rgb):
    frame = np.ascontiguousarray(astronaut_rgb[40:440, 10:])  # 502x400
    graph = load_tflite(model_file("face_detection_short_range"))
    engine = Engine(graph)
    pre = Preprocessor(engine, "input", value_range=(-1.0, 1.0))
    pre.set_roi(letterbox_matrix((frame.shape[1], frame.shape[0]), (128, 128)))
    encoder = CTX.device.create_command_encoder()
    pre.encode(encoder, _frame_texture(frame).create_view())
    CTX.device.queue.submit([encoder.finish()])
    lay = engine.tensor_layout("input")
    raw = CTX.device.queue.read_buffer(lay.buffer, lay.offset, lay.size)
    got = np.frombuffer(raw, np.float32).reshape(128, 128, 4)
    want, _ = letterbox(frame, (128, 128))
    assert (got[:, :, 3] == 0).all()  # PHWC4 padding lane
    diff = np.abs(got[:, :, :3] - want[0])
    assert diff.mean() < 0.01 and diff.max() < 0.1, (diff.mean(), diff.max())
