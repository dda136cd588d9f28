"""The solutions on the xnnpack backend beside the webgpu backend on the same frames: the
CPU twins (CpuDetector, CpuCrops) give the GPU stages' results; textures are read back;
output="gpu" uploads what the GPU stages would have left in their buffers."""

from __future__ import annotations

import numpy as np
import pytest

from engine.vision import FaceDetector, FaceMesh, Hands, SelfieSegmenter
from tests.helpers.files import CORE_MODELS, model_file
from tests.helpers.gpu import gpu_context
from tests.helpers.media import read_video, sample_clip

pytest.importorskip("ai_edge_litert.interpreter")
CTX = gpu_context()
GPU = {"context": CTX, "backend": "webgpu"}
CPU = {"context": CTX, "backend": "xnnpack"}


@pytest.fixture(scope="module")
def clip() -> list[np.ndarray]:
    for name in CORE_MODELS:
        model_file(name)
    return [np.ascontiguousarray(f[:, :, ::-1]) for f in read_video(sample_clip(), 3)]


def _texture(rgb: np.ndarray):
    h, w, _ = rgb.shape
    tex = CTX.device.create_texture(
        size=(w, h, 1), format="bgra8unorm", usage=0x4 | 0x2 | 0x1
    )  # binding, copy dst, copy src
    bgra = np.concatenate([rgb[:, :, ::-1], np.full((h, w, 1), 255, np.uint8)], axis=2)
    CTX.device.queue.write_texture({"texture": tex}, np.ascontiguousarray(bgra),
                                   {"bytes_per_row": w * 4, "rows_per_image": h}, (w, h, 1))  # fmt: skip
    return tex


def test_auto_picks_xnnpack_on_a_cpu_adapter_and_results_say_so(clip):
    from engine.gpu import adapter_class

    want = "webgpu" if adapter_class(CTX.info) == "gpu" else "xnnpack"
    with FaceDetector(context=CTX) as fd:
        assert fd.backend.name == want and fd.process(clip[0]).backend == want
    with FaceDetector(**GPU) as fd:
        assert fd.process(clip[0]).backend == "webgpu"


def test_detector_twin_matches_the_gpu_stages(clip):
    with FaceDetector(**GPU) as gpu, FaceDetector(**CPU) as cpu:
        for rgb in clip:
            want, got = gpu.process(rgb).detections, cpu.process(rgb).detections
            assert len(got) == len(want) >= 1
            for a, b in zip(got, want, strict=True):
                np.testing.assert_allclose(a.box_px, b.box_px, atol=0.05)
                np.testing.assert_allclose(a.keypoints, b.keypoints, atol=1e-4)
                assert a.score == pytest.approx(b.score, abs=1e-4)


def test_face_mesh_and_segmentation_match_the_gpu(clip):
    with FaceMesh(**GPU) as gpu, FaceMesh(**CPU) as cpu:
        for rgb in clip:
            want, got = gpu.process(rgb), cpu.process(rgb)
            assert (want.detections is None) == (got.detections is None)  # tracked alike
            np.testing.assert_allclose(got.faces[0].landmarks_px, want.faces[0].landmarks_px,
                                       atol=0.05)  # fmt: skip
            assert got.faces[0].tracked == want.faces[0].tracked
    with SelfieSegmenter(**GPU) as gpu, SelfieSegmenter(**CPU) as cpu:
        want, got = gpu.process(clip[0]).mask, cpu.process(clip[0]).mask
        assert np.abs(got - want).max() < 1e-3


def test_refined_face_mesh_matches_the_gpu(clip):
    """face_landmark_with_attention on xnnpack runs as LiteRT segments around MediaPipe's
    custom ops (engine/vision/backends/litert_segments.py): its 478 landmarks as webgpu's
    (against MediaPipe's own: tests/vision/test_fidelity_people.py); Holistic's too."""
    from engine.vision import Holistic

    model_file("face_landmark_with_attention")
    with (
        FaceMesh(refine_landmarks=True, **GPU) as gpu,
        FaceMesh(refine_landmarks=True, **CPU) as cpu,
    ):
        for rgb in clip:
            want, got = gpu.process(rgb), cpu.process(rgb)
            assert got.backend == "xnnpack" and got.faces[0].landmarks_px.shape == (478, 3)
            # the sub-crops amplify float32 rounding: 0.069 px at most on these frames
            np.testing.assert_allclose(got.faces[0].landmarks_px, want.faces[0].landmarks_px,
                                       atol=0.1)  # fmt: skip
    with Holistic(refine_face_landmarks=True, **CPU) as h:
        got = h.process(clip[0])
        assert got.backend == "xnnpack" and got.face_landmarks.shape == (478, 3)
    with FaceMesh(refine_landmarks=True, context=CTX) as auto:  # a CPU rasterizer: xnnpack
        from engine.gpu import adapter_class

        assert auto.backend.name == ("webgpu" if adapter_class(CTX.info) == "gpu" else "xnnpack")


def test_hands_twin_matches_the_gpu(astronaut_rgb):
    model_file("palm_detection_full")
    model_file("hand_landmark_full")
    frame = np.ascontiguousarray(astronaut_rgb)
    with Hands(static_image_mode=True, **GPU) as gpu, Hands(static_image_mode=True, **CPU) as cpu:
        want, got = gpu.process(frame), cpu.process(frame)
    assert len(got.palm_detections or ()) == len(want.palm_detections or ())
    assert len(got.hands) == len(want.hands)
    for a, b in zip(got.hands, want.hands, strict=True):
        np.testing.assert_allclose(a.landmarks_px, b.landmarks_px, atol=0.05)


def test_texture_frames_are_read_back(clip):
    with FaceMesh(**CPU) as a, FaceMesh(**CPU) as b:
        for rgb in clip:
            want, got = a.process(rgb), b.process(_texture(rgb))
            np.testing.assert_array_equal(got.faces[0].landmarks_px, want.faces[0].landmarks_px)
        assert b.backend.frames.readbacks == len(clip) and a.backend.frames.readbacks == 0


def test_gpu_output_uploads_the_results(clip):
    q = CTX.device.queue
    with FaceMesh(output="gpu", **CPU) as fm:
        res = fm.process(clip[0])
        gpu, face = fm.gpu, res.faces[0]
        points = np.frombuffer(q.read_buffer(gpu.points), np.float32).reshape(-1, 4)
        np.testing.assert_allclose(points[: gpu.num_points, :2], face.landmarks_px[:, :2],
                                   rtol=1e-6, atol=1e-3)  # fmt: skip
        status = np.frombuffer(q.read_buffer(gpu.status), np.float32)
        args = np.frombuffer(q.read_buffer(gpu.args), np.uint32)
        assert status[1] == 1.0 and args[1] == gpu.num_points
    with FaceDetector(output="gpu", **CPU) as fd:
        res = fd.process(clip[0])
        count = np.frombuffer(q.read_buffer(fd.gpu.status), np.uint32)[0]
        rec = fd.gpu.record
        raw = np.frombuffer(q.read_buffer(fd.gpu.detections), np.float32)
        assert count == len(res.detections) >= 1
        np.testing.assert_allclose(raw[rec.frame_px : rec.frame_px + 4],
                                   res.detections[0].box_px, rtol=1e-6)  # fmt: skip
    with SelfieSegmenter(output="gpu", **CPU) as seg:
        seg.process(clip[0])
        _, h, w, _ = seg.gpu.phwc4
        mask = np.frombuffer(q.read_buffer(seg.gpu.buffer), np.float32).reshape(h, w, 4)
        assert mask[..., 1:].max() == 0 and 0 < mask[..., 0].mean() < 1


def test_xnnpack_needs_no_adapter(clip):
    with FaceMesh(backend="xnnpack") as fm:
        assert fm.ctx is None and fm.process(clip[0]).faces
    with pytest.raises(ValueError, match="context"):
        FaceDetector(backend="xnnpack", output="gpu")
