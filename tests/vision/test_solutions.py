"""The solutions API on the webgpu backend: inputs, outputs, tracking, timestamps, release,
options (the xnnpack backend: test_xnnpack_solutions.py)."""

from __future__ import annotations

from dataclasses import astuple

import numpy as np
import pytest

from engine.errors import ModelError
from engine.vision import FaceDetector, FaceMesh, SelfieSegmenter, roi_from_landmarks
from engine.vision.roi import rect_matrix
from tests.helpers.files import CORE_MODELS, model_file
from tests.helpers.gpu import gpu_context
from tests.helpers.media import read_video, sample_clip

CTX = gpu_context()
GPU = {"context": CTX, "backend": "webgpu"}  # these tests are about the GPU path


@pytest.fixture(scope="module")
def clip() -> list[np.ndarray]:
    for name in CORE_MODELS:
        model_file(name)
    return [np.ascontiguousarray(f[:, :, ::-1]) for f in read_video(sample_clip(), 4)]


def _texture(rgb: np.ndarray):
    import wgpu

    h, w, _ = rgb.shape
    tex = CTX.device.create_texture(
        size=(w, h, 1), format="rgba8unorm",
        usage=wgpu.TextureUsage.TEXTURE_BINDING | wgpu.TextureUsage.COPY_DST,
    )  # fmt: skip
    rgba = np.concatenate([rgb, np.full((h, w, 1), 255, np.uint8)], axis=2)
    CTX.device.queue.write_texture({"texture": tex}, rgba,
                                   {"bytes_per_row": w * 4, "rows_per_image": h}, (w, h, 1))  # fmt: skip
    return tex


def test_missing_models_say_how_to_fetch(tmp_path, monkeypatch):
    with pytest.raises(ModelError, match="no such model file"):
        FaceDetector(tmp_path / "nope.tflite", **GPU)
    monkeypatch.setenv("ENGINE_DATA_DIR", str(tmp_path))
    from engine import config

    config.reload()
    with pytest.raises(ModelError, match="engine-fetch models"):
        FaceMesh(**GPU)


def test_detector_inputs_rgb_bgr_texture_agree(clip):
    rgb = clip[0]
    with FaceDetector(**GPU) as fd:
        a = fd.process(rgb)
        b = fd.process(_texture(rgb))
        c = fd.process(_texture(rgb).create_view())
    with FaceDetector(**GPU, bgr=True) as fd:
        d = fd.process(np.ascontiguousarray(rgb[:, :, ::-1]))
    assert len(a.detections) == 1 and a.image_size == (640, 480)
    for other in (b, c, d):
        np.testing.assert_allclose(other.detections[0].box_px, a.detections[0].box_px, atol=1e-4)
    det = a.detections[0]
    np.testing.assert_allclose(det.box_px, det.box * (640, 480, 640, 480), rtol=1e-5)
    np.testing.assert_allclose(det.keypoints_px, det.keypoints * (640, 480), rtol=1e-5)
    assert 0.5 < det.score <= 1 and det.keypoints.shape == (6, 2)


def test_gpu_output_reads_nothing_back_until_asked(clip, monkeypatch):
    from wgpu.backends.wgpu_native import GPUBuffer

    with FaceMesh(**GPU, static_image_mode=True) as want_fm:
        want = want_fm.process(clip[0])
    with FaceMesh(**GPU, output="gpu", static_image_mode=True) as fm:
        fm.process(clip[0])  # compile and warm up
        maps = []
        original = GPUBuffer.map_async
        monkeypatch.setattr(GPUBuffer, "map_async",
                            lambda self, *a, **k: maps.append(self) or original(self, *a, **k))  # fmt: skip
        res = fm.process(clip[0])
        assert maps == [] and res.faces is None and res.gpu.points is fm.program.projector.points
        got = fm.read()  # the same frame, read back now
    np.testing.assert_allclose(got.faces[0].landmarks_px, want.faces[0].landmarks_px, atol=1e-3)


def test_tracking_skips_the_detector_and_static_mode_does_not(clip):
    with FaceMesh(**GPU) as fm:
        video = list(fm.stream(clip))
    with FaceMesh(**GPU, static_image_mode=True) as fm:
        stills = [fm.process(f) for f in clip]
    assert video[0].detections is not None and not video[0].faces[0].tracked
    for r in video[1:]:
        assert r.detections is None and r.faces[0].tracked
    assert [r.timestamp_ms for r in video] == [0, 33, 67, 100]
    for r in stills:
        assert len(r.detections) == 1 and not r.faces[0].tracked
    # the first frame has no history: both modes crop the same detection ROI
    np.testing.assert_allclose(video[0].faces[0].landmarks, stills[0].faces[0].landmarks)


def test_face_lost_then_detected_again(clip):
    """MediaPipe's loop: a frame whose face flag fails yields no face; the next one runs
    the detector again."""
    black = np.zeros_like(clip[0])
    with FaceMesh(**GPU) as fm:
        results = [fm.process(f) for f in (clip[0], clip[1], black, black, clip[2])]
    assert [len(r.faces) for r in results] == [1, 1, 0, 0, 1]
    assert [r.detections is not None for r in results] == [True, False, False, True, True]
    assert results[3].detections == () and results[4].faces[0].tracked is False


def test_gpu_tracking_roi_matches_numpy_oracle(clip):
    with FaceMesh(**GPU) as fm:
        res = fm.process(clip[0])
        raw = np.frombuffer(CTX.device.queue.read_buffer(fm.program.tracker.track), np.float32)
    track = raw.reshape(6, 4).astype(np.float64)
    want = rect_matrix(roi_from_landmarks(res.faces[0].landmarks_px, (640, 480)), (640, 480))
    assert track[5, 1] == 1.0 and track[0, 3] == 1.0  # valid, from landmarks
    np.testing.assert_allclose(track[:2, :3], want, atol=1e-4 * np.abs(want).max())


def test_steps_path_matches_process(clip):
    """GPU-resident use (the detector every frame, the ROI chosen on the GPU) gives what
    process() gives (the detector skipped while tracking)."""
    view_of = {}
    with FaceMesh(**GPU) as fm, FaceMesh(**GPU) as gpu_fm:
        gpu_fm.prepare((640, 480))
        for i, frame in enumerate(clip):
            want = fm.process(frame)
            tex = view_of.setdefault(i, _texture(frame))
            enc = CTX.device.create_command_encoder()
            for _, encode in gpu_fm.steps(tex.create_view()):
                encode(enc)
            CTX.device.queue.submit([enc.finish()])
            got = gpu_fm.read()
            assert got.faces[0].tracked == want.faces[0].tracked == (i > 0)
            np.testing.assert_allclose(got.faces[0].landmarks_px, want.faces[0].landmarks_px,
                                       atol=1e-3)  # fmt: skip


@pytest.mark.parametrize("solution", [SelfieSegmenter, FaceMesh])
def test_timestamps_must_increase_in_video_mode(clip, solution):
    with solution(**GPU) as s:
        s.process(clip[0], 100)  # the first frame also sets the solution up
        with pytest.raises(ValueError, match="must increase"):
            s.process(clip[1], 100)
    with SelfieSegmenter(**GPU, running_mode="image") as seg:
        seg.process(clip[0], 100)
        assert seg.process(clip[1], 50).timestamp_ms == 50


def test_close_releases_and_refuses_more_work(clip, monkeypatch):
    from wgpu.backends.wgpu_native import GPUBuffer

    destroyed = []
    original = GPUBuffer.destroy
    monkeypatch.setattr(GPUBuffer, "destroy", lambda self: destroyed.append(self) or original(self))
    with SelfieSegmenter(**GPU) as seg:
        res = seg.process(clip[0])
        mask_buffer = seg.gpu.buffer
    assert res.mask.shape == (480, 640) and res.mask.dtype == np.float32
    assert mask_buffer in destroyed and seg.program.pre.roi in destroyed
    with pytest.raises(RuntimeError, match="closed"):
        seg.process(clip[0])


def test_engine_options_pass_through():
    for name in CORE_MODELS:
        model_file(name)
    with SelfieSegmenter(**GPU, planner="naive", storage="buffer") as seg:
        engine = seg.engines["segmentation"]
        assert (engine.planner, engine.storage, engine.memory.strategy) == (
            "naive", "buffer", "naive",
        )  # fmt: skip
    with pytest.raises(ValueError, match="running_mode"):
        SelfieSegmenter(**GPU, running_mode="live")


def test_landscape_segmenter_agrees_with_the_square_one(clip):
    with SelfieSegmenter(**GPU) as a, SelfieSegmenter(**GPU, model_selection=1) as b:
        ma, mb = a.process(clip[0]).mask > 0.5, b.process(clip[0]).mask > 0.5
    assert mb.shape == (480, 640)
    assert (ma & mb).sum() / (ma | mb).sum() > 0.8


def test_refined_face_mesh_tracks_478_landmarks(clip):
    from engine.vision.face_refinement import LEFT_EYE, RIGHT_EYE

    model_file("face_landmark_with_attention")
    with FaceMesh(refine_landmarks=True, **GPU) as fm:
        video = list(fm.stream(clip))
        assert fm.backend.name == "webgpu" and {r.backend for r in video} == {"webgpu"}
    assert [len(r.faces) for r in video] == [1, 1, 1, 1]
    assert video[0].detections is not None and all(r.detections is None for r in video[1:])
    for r in video:
        face = r.faces[0]
        assert face.landmarks.shape == face.landmarks_px.shape == (478, 3)
        np.testing.assert_allclose(face.landmarks_px, face.landmarks * (640, 480, 640))
        for iris, eye in ((slice(468, 473), LEFT_EYE[:16]), (slice(473, 478), RIGHT_EYE[:16])):
            contour = face.landmarks_px[list(eye), :2]
            centre = face.landmarks_px[iris.start, :2]  # inside its eye's contour box
            assert (contour.min(axis=0) < centre).all() and (centre < contour.max(axis=0)).all()
            assert len(set(face.landmarks[iris, 2])) == 1  # one depth for the five points
    # each next ROI comes from all 478 landmarks of the frame before
    for prev, cur in zip(video[:-1], video[1:], strict=True):
        want = roi_from_landmarks(prev.faces[0].landmarks_px, (640, 480))
        assert cur.faces[0].tracked
        np.testing.assert_allclose(astuple(cur.faces[0].roi), astuple(want), atol=1e-9)


def test_refined_face_mesh_on_the_gpu_path_uploads_its_478_points(clip):
    """output="gpu" with refine_landmarks: prepare_frame() runs process() and uploads the
    face's 478 points where the app's draws read them (gpu.points: pixels, then
    normalised); steps() then records nothing of the solution's."""
    model_file("face_landmark_with_attention")
    with FaceMesh(refine_landmarks=True, **GPU) as fm:
        want = [r.faces[0] for r in fm.stream(clip[:2])]
    with FaceMesh(refine_landmarks=True, output="gpu", **GPU) as fm:
        gpu = fm.gpu
        assert gpu.num_points == 478
        for frame, face in zip(clip[:2], want, strict=True):
            texture = _texture(frame)
            assert fm.prepare_frame(texture).faces is not None
            assert fm.steps(texture.create_view()) == []
            raw = np.frombuffer(CTX.device.queue.read_buffer(gpu.points), np.float32)
            points = raw.reshape(-1, 4)
            np.testing.assert_allclose(points[:478, :3], face.landmarks_px, atol=1e-3)
            off = gpu.norm_offset // 16
            np.testing.assert_allclose(points[off : off + 478, :3], face.landmarks, atol=1e-6)
    with pytest.raises(ValueError, match="max_num_faces=1"):
        FaceMesh(context=CTX, max_num_faces=2, output="gpu")


def test_stream_reading_ahead_gives_what_process_gives(clip):
    """stream() takes its frames on a worker thread (read_ahead.py); the results are
    process()'s on the same frames, tracking included."""

    def decoded():  # a generator, as a caller decoding a video writes it
        yield from clip

    with FaceMesh(**GPU) as mesh:
        streamed = list(mesh.stream(decoded(), fps=30.0))
    with FaceMesh(**GPU) as mesh:
        direct = [mesh.process(f, round(i * 1000 / 30.0)) for i, f in enumerate(clip)]
    assert len(streamed) == len(direct) == len(clip)
    for a, b in zip(streamed, direct, strict=True):
        assert len(a.multi_face_landmarks) == len(b.multi_face_landmarks) == 1
        np.testing.assert_array_equal(a.multi_face_landmarks[0], b.multi_face_landmarks[0])


def test_staged_kernels_are_refused_up_front():
    """Engine(kernels="staged") refuses encode(), which the solutions' stages use: said at
    construction, not at the first frame."""
    with pytest.raises(ValueError, match="kernels='staged'"):
        FaceDetector(**GPU, kernels="staged")
