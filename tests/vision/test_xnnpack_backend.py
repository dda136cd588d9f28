"""The solutions' xnnpack backend: the choice from adapter facts, the fast pre-process
against the oracle, and the CPU twins against the GPU stages (engine/vision/backends/,
xnnpack.py, cpu_stages.py). Fidelity against MediaPipe on
this backend: tests/vision/test_fidelity*.py run it too."""

from __future__ import annotations

import zlib

import numpy as np
import pytest

from engine.errors import ModelError
from engine.vision import backends as backend
from engine.vision.image_to_tensor import (
    WarpBuffers,
    image_to_tensor,
    subrect_matrix,
    warp_to_tensor,
)

RNG = np.random.default_rng(zlib.crc32(b"test_xnnpack_backend"))


@pytest.mark.parametrize(
    ("asked", "adapter", "want"),
    [("auto", "llvmpipe", "xnnpack"), ("auto", "swiftshader", "xnnpack"),
     ("auto", "cpu", "xnnpack"), ("auto", "gpu", "webgpu"), ("webgpu", "llvmpipe", "webgpu"),
     ("xnnpack", "gpu", "xnnpack"), ("xnnpack", None, "xnnpack")],
)  # fmt: skip
def test_backend_from_adapter_class(monkeypatch, asked, adapter, want):
    monkeypatch.setattr(backend, "litert_installed", lambda: True)
    assert backend.choose_backend(asked, adapter) == want


def test_auto_without_litert_stays_on_webgpu_and_says_how(monkeypatch):
    monkeypatch.setattr(backend, "litert_installed", lambda: False)
    with pytest.warns(UserWarning, match=r"pip install webgpu-ar\[cpu\]"):
        assert backend.choose_backend("auto", "llvmpipe") == "webgpu"
    assert backend.choose_backend("auto", "gpu") == "webgpu"  # no warning needed
    with pytest.raises(ValueError, match="backend must be one of"):
        backend.choose_backend("cpu", "gpu")


def _attention_graph():
    from engine.catalog.manifest import model_path
    from engine.model.importer import load_tflite

    path = model_path("face_landmark_with_attention")
    if not path.is_file():
        pytest.fail(f"{path} is missing: `make models` fetches it")
    return load_tflite(path)


def test_the_attention_model_splits_around_the_ops_litert_lacks():
    """face_landmark_with_attention as LiteRT segments and MediaPipe's custom ops: every op
    once, in order; each segment reads only the model's input, constants or tensors an
    earlier segment handed on."""
    from engine.vision.backends.litert_segments import split

    graph = _attention_graph()
    segments = split(graph)
    kinds = [("litert" if s.op is None else s.op.type) for s in segments]
    assert kinds == ["litert", *["Landmarks2TransformMatrix"] * 3,
                     *["TransformTensorBilinear"] * 3, "litert", *["TransformLandmarks"] * 5,
                     "litert"]  # fmt: skip
    ops = [op for s in segments for op in ([s.op] if s.op else s.graph.ops)]
    assert len(ops) == len(graph.ops)
    assert [op.type for op in ops] == [op.type for op in graph.ops]
    handed = set(graph.inputs)
    for s in segments:
        assert set(s.inputs) <= handed
        handed |= set(s.outputs)
    assert set(graph.outputs) <= handed


def test_the_fast_crop_matches_the_reference():
    """crop_bilinear (float32) against the reference's TransformTensorBilinear (float64)
    on random feature maps and matrices: rotated, scaled, partly and wholly outside, on
    the edge, degenerate (NaN)."""
    from engine.model.ir import Op
    from engine.reference.landmark_ops import sample_bilinear
    from engine.vision.backends.litert_segments import crop_bilinear

    rng = np.random.default_rng(7)
    for case in range(300):
        h, w, c = rng.integers(2, 40, 3)
        out_h, out_w = (int(v) for v in rng.integers(1, 20, 2))
        data = rng.standard_normal((1, h, w, c)).astype(np.float32)
        angle, scale = rng.uniform(-np.pi, np.pi), rng.uniform(0.1, 3.0)
        m = np.eye(4)
        m[:2, :2] = scale * np.array([[np.cos(angle), -np.sin(angle)],
                                      [np.sin(angle), np.cos(angle)]])  # fmt: skip
        m[:2, 3] = rng.uniform(-10, max(h, w) + 10, 2)
        if case % 50 == 0:
            m[:2, :2], m[:2, 3] = 0.0, (w - 1, h - 1)  # every sample on the last pixel
        if case == 1:
            m[0, 0] = np.nan
        op = Op("TransformTensorBilinear", (0, 1), (2,),
                {"output_height": out_h, "output_width": out_w}, custom=True)  # fmt: skip
        (got,) = crop_bilinear(op, [data, m.reshape(1, 4, 4).astype(np.float32)])
        want = sample_bilinear(data[0], m.astype(np.float32), out_h, out_w)
        assert got.dtype == np.float32 and got.shape == (1, out_h, out_w, c)
        np.testing.assert_allclose(got[0], want, rtol=0, atol=2e-6 * max(1, np.abs(want).max()))


def test_the_fast_crop_matrix_matches_the_reference():
    """crop_matrix against the reference's Landmarks2TransformMatrix on random landmarks,
    with the attention model's own options (lips, left eye, right eye) and odd ones."""
    from engine.reference.landmark_ops import transform_matrix
    from engine.vision.backends.litert_segments import crop_matrix

    graph = _attention_graph()
    ops = [op for op in graph.ops if op.type == "Landmarks2TransformMatrix"]
    assert len(ops) == 3
    rng = np.random.default_rng(8)
    for case in range(200):
        op = ops[case % 3]
        if case % 4 == 3:
            from engine.model.ir import Op

            attrs = {**op.attrs, "scale_x": rng.uniform(0.5, 3), "scale_y": rng.uniform(0.5, 3),
                     "target_rotation_radians": rng.uniform(-np.pi, np.pi),
                     "output_width": int(rng.integers(4, 40)),
                     "output_height": int(rng.integers(4, 40))}  # fmt: skip
            op = Op(op.type, op.inputs, op.outputs, attrs, custom=True)
        lm = (rng.uniform(0, 192, (1, 468, 3))).astype(np.float32)
        (got,) = crop_matrix(op, [lm])
        want = transform_matrix(lm.reshape(-1, 3), op.attrs)
        assert got.dtype == np.float32 and got.shape == (1, 4, 4)
        np.testing.assert_allclose(got[0], want, rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("seed", [1, 2])
def test_the_segmented_attention_model_matches_float64(seed):
    """On LiteRT around its custom ops, against the reference interpreter in float64 (the
    custom ops written from MediaPipe's CPU kernels; the builtin ones checked against
    LiteRT on the other models: tests/reference/test_models.py), on random crops."""
    from engine.reference import Interpreter
    from engine.vision.backends.xnnpack import XnnpackModel

    graph = _attention_graph()
    model = XnnpackModel(graph.name, num_threads=2)
    assert model.segments is not None and model.input_size == (192, 192)
    x = np.random.default_rng(seed).random((1, 192, 192, 3), np.float32)
    got = model.run(x)
    want = Interpreter(graph, np.float64).run([x.astype(np.float64)])
    assert list(got) == [graph.tensors[t].name for t in graph.outputs]
    for name, value in got.items():
        ref = np.asarray(want[name])
        assert value.dtype == np.float32 and value.shape == ref.shape
        np.testing.assert_allclose(value, ref, rtol=0, atol=1e-5 * np.abs(ref).max(), err_msg=name)


def test_xnnpack_without_litert_names_the_extra(monkeypatch):
    import builtins

    real_import = builtins.__import__

    def no_litert(name, *args, **kwargs):
        if name.startswith("ai_edge_litert"):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_litert)
    with pytest.raises(ModelError, match=r"pip install webgpu-ar\[cpu\]"):
        backend.require_litert()


@pytest.mark.parametrize("border", ["zero", "replicate"])
@pytest.mark.parametrize("channels", [3, 4])
def test_warp_to_tensor_equals_the_oracle(border, channels):
    """cv2.remap on the oracle's fixed-point coordinates: the same values, bit for bit,
    for rotated crops reaching past every edge, letterboxes and wide tensors."""
    image = RNG.integers(0, 256, (120, 160, channels), np.uint8)
    buffers = WarpBuffers()  # one caller's, reused over every size and matrix
    repeating = WarpBuffers(repeating=True)  # maps from the cache, warp and tensor kept
    for k in range(12):
        m = subrect_matrix(RNG.uniform(-30, 190), RNG.uniform(-30, 150), RNG.uniform(8, 260),
                           RNG.uniform(8, 260), RNG.uniform(-3.2, 3.2))  # fmt: skip
        size = ((64, 64), (96, 48), (31, 17))[k % 3]
        want = image_to_tensor(image, m, size, (-1.0, 1.0), border)
        got = warp_to_tensor(image, m, size, (-1.0, 1.0), border)
        np.testing.assert_array_equal(got, want)
        into = warp_to_tensor(image, m, size, (-1.0, 1.0), border, buffers)
        np.testing.assert_array_equal(into, want)
        assert into is buffers.arrays(size, channels)["tensor"]  # no new tensor
        for _ in range(2):  # the matrix repeats: the same values from the cached maps
            kept = warp_to_tensor(image, m, size, (-1.0, 1.0), border, repeating)
            np.testing.assert_array_equal(kept, want)
            assert kept is repeating.arrays(size, channels)["tensor"]


def test_warp_to_tensor_refuses_what_the_oracle_refuses():
    with pytest.raises(ValueError, match="8-bit"):
        warp_to_tensor(np.zeros((4, 4, 3), np.float32), subrect_matrix(2, 2, 4, 4), (4, 4))
    with pytest.raises(ValueError, match="border"):
        warp_to_tensor(np.zeros((4, 4, 3), np.uint8), subrect_matrix(2, 2, 4, 4), (4, 4),
                       border="wrap")  # fmt: skip


def test_cpu_frames_convert_into_one_kept_array():
    """BGR, BGRA and RGBA frames -> RGB by channel order alone (numpy's flip as the
    oracle), into one array kept from frame to frame while the size holds."""
    from engine.vision.backends.cpu_stages import CpuFrames

    bgr_frames, rgba_frames = CpuFrames(bgr=True), CpuFrames()
    kept = None
    for size in ((48, 64), (48, 64), (30, 20)):
        bgr = RNG.integers(0, 256, (*size, 3), np.uint8)
        got, wh = bgr_frames(bgr)
        np.testing.assert_array_equal(got, bgr[..., ::-1])
        assert wh == (size[1], size[0])
        assert kept is None or (got is kept) == (got.shape == kept.shape)
        kept = got
        bgra = RNG.integers(0, 256, (*size, 4), np.uint8)
        np.testing.assert_array_equal(bgr_frames(bgra)[0], bgra[..., 2::-1])
        rgba = RNG.integers(0, 256, (*size, 4), np.uint8)
        np.testing.assert_array_equal(rgba_frames(rgba)[0], rgba[..., :3])
    rgb = RNG.integers(0, 256, (8, 8, 3), np.uint8)
    assert rgba_frames(rgb)[0] is rgb  # RGB as it is: no copy
