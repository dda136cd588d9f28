"""Face geometry on the GPU (engine/vision/gpu_face_geometry.py, float32) against its numpy
twin (engine/vision/face_geometry.py, float64) on the same landmarks: every reference face
of both clips (tests/data/mediapipe/face_geometry.npz's inputs) written into a points
buffer, one dispatch; then FaceMesh(face_geometry=True, output="gpu") on both paths: the
GPU frame computes it after the projection, the CPU-decided path uploads every face's."""

from __future__ import annotations

import math

import numpy as np
import pytest

from engine.vision.face_geometry import face_geometry
from engine.vision.gpu_face_geometry import POSE_VEC4, GpuFaceGeometry
from tests.helpers.files import ROOT
from tests.helpers.gpu import gpu_context

CTX = gpu_context()
DATA = ROOT / "tests" / "data" / "mediapipe"
SIZE = (640, 480)  # both clips
# the faces MediaPipe's calculator was fed (make_face_geometry.py SOURCES)
SOURCES = {
    "people_fm": ("people_clip.npz", "fm_landmarks"),
    "people_fmr": ("people_clip.npz", "fmr_landmarks"),
    "sample_fm": ("sample_clip.npz", "fm_landmarks"),
}
# float32 on the GPU against float64 on the same landmarks (measured max over the 832
# faces: 0.00007 degrees, 0.00009 cm, 0.0005 mm)
BOUND = {"rotation_deg": 1e-3, "translation_cm": 1e-3, "mesh_mm": 0.01}
# against MediaPipe's own float32 calculator: the numpy twin's bound there
# (tests/vision/test_face_geometry.py FLOAT32)
MEDIAPIPE_DEG = 0.002


def rotation_deg(a: np.ndarray, b: np.ndarray) -> float:
    """The angle between the rotations of two similarity matrices (scale divided out)."""
    ra, rb = (m[:3, :3] / np.linalg.norm(m[:3, 0]) for m in (a, b))
    d = ra.T @ rb
    axis = np.array([d[2, 1] - d[1, 2], d[0, 2] - d[2, 0], d[1, 0] - d[0, 1]])
    return math.degrees(math.atan2(np.linalg.norm(axis), np.trace(d) - 1.0))


def _buffer(data: np.ndarray):
    import wgpu

    usage = wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_DST
    return CTX.device.create_buffer_with_data(data=np.ascontiguousarray(data), usage=usage)


def gpu_geometry(faces: np.ndarray, present=None, size=SIZE) -> list:
    """(pose, mesh) or None per face: one dispatch over all of them (a work group each)."""
    n, k = faces.shape[:2]
    points = np.ones((n, k, 4), np.float32)
    points[..., :3] = faces
    flags = np.ones(n, np.float32) if present is None else np.asarray(present, np.float32)
    stage = GpuFaceGeometry(CTX, _buffer(points), _buffer(flags), faces=n, points_stride=k,
                            status_start=0, status_stride=1)  # fmt: skip
    stage.configure(size)
    encoder = CTX.device.create_command_encoder()
    stage.encode(encoder)
    CTX.device.queue.submit([encoder.finish()])
    try:
        return stage.read()
    finally:
        stage.destroy()


def differences(got, want) -> dict:
    """The largest rotation (degrees), translation (cm) and mesh vertex (mm) difference."""
    (pose, mesh), wp = got, want.pose_transform_matrix
    return {"rotation_deg": rotation_deg(pose, wp),
            "translation_cm": float(np.linalg.norm(pose[:3, 3] - wp[:3, 3])),
            "mesh_mm": float(np.linalg.norm(mesh - want.mesh, axis=1).max() * 10.0)}  # fmt: skip


@pytest.mark.parametrize("name", list(SOURCES))
def test_every_reference_face_is_the_numpy_geometry(name):
    file, key = SOURCES[name]
    with np.load(DATA / file) as clip:
        faces = clip[key].astype(np.float32)  # what the GPU holds: both get these values
    with np.load(DATA / "face_geometry.npz") as ref:
        mediapipe = ref[f"{name}_matrix"].astype(np.float64)
    got = gpu_geometry(faces)
    worst = dict.fromkeys(BOUND, 0.0)
    for lm, g, mp_matrix in zip(faces, got, mediapipe, strict=True):
        assert g is not None
        d = differences(g, face_geometry(lm.astype(np.float64), SIZE))
        worst = {k: max(worst[k], d[k]) for k in BOUND}
        # and MediaPipe's own (float32) calculator within the numpy twin's bound
        assert rotation_deg(g[0], mp_matrix) < MEDIAPIPE_DEG
    assert all(worst[k] < BOUND[k] for k in BOUND), worst


def test_rotation_is_proper_and_the_posed_mesh_lands_on_the_landmarks():
    faces = np.load(DATA / "people_clip.npz")["fm_landmarks"][::40].astype(np.float32)
    # the mirror image of a face (x -> 1 - x): a reflection fits it; the solve must not
    mirrored = faces * (-1.0, 1.0, 1.0) + (1.0, 0.0, 0.0)
    for lm, (pose, mesh) in zip(np.concatenate([faces, mirrored]),
                                gpu_geometry(np.concatenate([faces, mirrored])),
                                strict=True):  # fmt: skip
        assert np.linalg.det(pose[:3, :3]) > 0
        camera = mesh @ pose[:3, :3].T + pose[:3, 3]
        clip = np.c_[camera, np.ones(len(camera))] @ face_geometry(lm, SIZE).environment\
            .perspective_matrix(SIZE).T  # fmt: skip
        screen = (clip[:, :2] / clip[:, 3:] + 1.0) / 2.0
        np.testing.assert_allclose(screen, lm[:468, :2], atol=2e-5)  # 0.01 px at 640


def test_absent_and_too_compact_faces_have_no_geometry():
    face = np.load(DATA / "sample_clip.npz")["fm_landmarks"][0].astype(np.float32)
    tiny = face.copy()
    tiny[:, :2] = 0.5 + (tiny[:, :2] - tiny[:, :2].mean(axis=0)) * 1e-4
    assert face_geometry(tiny.astype(np.float64), SIZE) is None
    got = gpu_geometry(np.stack([face, face, tiny]), present=[1.0, 0.0, 1.0])
    assert got[0] is not None and got[1] is None and got[2] is None


# --- FaceMesh(face_geometry=True, output="gpu") ---------------------------------------------


def _read_geometry(gpu) -> list:
    """A FaceGeometryGpu read back: (pose, mesh) or None per slot."""
    q = CTX.device.queue
    poses = np.frombuffer(q.read_buffer(gpu.poses), np.float32).reshape(-1, POSE_VEC4, 4)
    mesh = np.frombuffer(q.read_buffer(gpu.mesh), np.float32).reshape(-1, 468, 4)
    return [(p[:4].T.astype(np.float64), m[:, :3].astype(np.float64)) if p[4, 0] > 0.5
            else None for p, m in zip(poses[: gpu.max_faces], mesh, strict=False)]  # fmt: skip


@pytest.fixture(scope="module")
def frames() -> list[np.ndarray]:
    from tests.helpers.files import model_file
    from tests.helpers.media import read_video, sample_clip

    model_file("face_detection_short_range")
    model_file("face_landmark")
    return [np.ascontiguousarray(f[:, :, ::-1]) for f in read_video(sample_clip(), 3)]


def test_gpu_frame_computes_it_after_the_projection(frames):
    """webgpu's one-face GPU frame: the geometry of the landmarks it leaves in its points
    buffer, nothing read back by the frame (read() is the test's)."""
    from engine.vision import FaceMesh

    with FaceMesh(face_geometry=True, output="gpu", context=CTX, backend="webgpu") as mesh:
        assert mesh.program is not None and mesh.gpu.geometry.max_faces == 1
        for i, rgb in enumerate(frames):
            res = mesh.process(rgb, timestamp_ms=33 * i)
            assert res.faces is None and res.gpu.geometry is not None
            assert mesh.last_frame_counts == (1, 0)  # one submit, no read
            (got,) = _read_geometry(mesh.gpu.geometry)
            want = mesh.read().faces[0].geometry  # numpy, on the landmarks read back
            d = differences(got, want)
            assert all(d[k] < BOUND[k] for k in BOUND), d


def test_cpu_decided_path_uploads_every_face(frames):
    """xnnpack (the CPU-decided path): each face's numpy geometry uploaded in its slot;
    max_num_faces=2 with output="gpu" takes face_geometry (one face in the clip: slot 1
    stays invalid)."""
    pytest.importorskip("ai_edge_litert.interpreter")
    from engine.vision import FaceMesh

    with FaceMesh(face_geometry=True, output="gpu", context=CTX, backend="xnnpack",
                  max_num_faces=2) as mesh:  # fmt: skip
        assert mesh.program is None
        res = mesh.process(frames[0], timestamp_ms=0)
        assert res.gpu.geometry == mesh.gpu.geometry
        got = _read_geometry(mesh.gpu.geometry)
        want = res.faces[0].geometry
        assert len(res.faces) == 1 and got[1] is None
        np.testing.assert_allclose(got[0][0], want.pose_transform_matrix, rtol=1e-6, atol=1e-5)
        np.testing.assert_allclose(got[0][1], want.mesh, atol=1e-5)
        assert mesh.upload_bytes > 0
