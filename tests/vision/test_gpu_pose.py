"""Pose wholly on the GPU (engine/vision/gpu_pose.py) against the CPU-decided path on the
same backend (BodyTracker over detect_track.py: float64 decisions, the oracle the GPU
frame mirrors in float32) on the people clip's bus and car shots (one body), over a
frame without a body, and its counts: one submit a frame, the results one read, nothing
read on the app's path."""

from __future__ import annotations

import numpy as np
import pytest

from engine.vision import Pose
from engine.vision.roi import Rect
from engine.vision.roi_model import unpack
from engine.vision.smoothing import LandmarksSmoother, VisibilitySmoother
from engine.vision.solutions.pose import NUM_BODY, NUM_LANDMARKS, BodyTracker, pose_roi
from tests.helpers.files import model_file
from tests.helpers.gpu import gpu_context
from tests.helpers.media import people_clip, read_video

CTX = gpu_context()
GPU = {"context": CTX, "backend": "webgpu"}
BUS, CAR = 235, 0  # the people clip's bus shot and its first (car) shot: one body each
SIZE = (640, 480)


@pytest.fixture(scope="module")
def clip() -> dict[str, list[np.ndarray]]:
    model_file("pose_detection")
    model_file("pose_landmark_full")
    frames = [np.ascontiguousarray(f[:, :, ::-1]) for f in read_video(people_clip(), BUS + 5)]
    return {"bus": frames[BUS:], "car": frames[CAR : CAR + 1]}


@pytest.fixture(scope="module")
def video():
    """A GPU frame and the CPU-decided path, tracking with segmentation (reset per test)."""
    gpu, cpu = Pose(enable_segmentation=True, **GPU), _cpu_decided(enable_segmentation=True)
    yield gpu, cpu
    gpu.close()
    cpu.close()


def _cpu_decided(**options) -> Pose:
    pose = Pose(**GPU, **options)
    pose.program = None  # the CPU-decided path on the same backend: the oracle here
    return pose


def _iou(a: np.ndarray, b: np.ndarray) -> float:
    return float(((a > 0.5) & (b > 0.5)).sum() / ((a > 0.5) | (b > 0.5)).sum())


def _same_pose(got, want, xy: float, z: float, median: float, visibility: float,
               presence: float, world: float, roi_px: float, rotation: float) -> None:  # fmt: skip
    assert (got.landmarks is None) == (want.landmarks is None)
    assert (got.detections is None) == (want.detections is None)
    if got.detections is not None:
        assert len(got.detections) == len(want.detections)
    if want.landmarks is None:
        return
    assert got.tracked == want.tracked
    d = np.abs(got.landmarks_px - want.landmarks_px)
    assert d[:, :2].max() <= xy and np.median(d[:, :2]) <= median and d[:, 2].max() <= z
    np.testing.assert_allclose(got.visibility, want.visibility, atol=visibility)
    np.testing.assert_allclose(got.presence, want.presence, atol=presence)
    np.testing.assert_allclose(got.world_landmarks, want.world_landmarks, atol=world)
    (fw, fh), a, b = SIZE, got.roi, want.roi
    np.testing.assert_allclose(
        [a.x_center * fw, a.y_center * fh, a.width * fw, a.height * fh],
        [b.x_center * fw, b.y_center * fh, b.width * fw, b.height * fh], atol=roi_px,
    )  # fmt: skip
    assert a.rotation == pytest.approx(b.rotation, abs=rotation)
    assert _iou(got.mask, want.mask) >= 0.99


# stills: the float32 ROI (measured 1e-5 px, 1.2e-6 rad from the float64 one) moves some
# of the crop's 1/32-pixel sample positions; measured on the bus and car frames: x, y
# within 0.18 px (the foot, landmark 32; median 0.006), z 0.92 px, visibility and presence
# 5e-4, world 7e-4 m, mask IoU 0.9992
STILL = {"xy": 0.4, "z": 2.0, "median": 0.02, "visibility": 2e-3, "presence": 2e-3,
         "world": 2e-3, "roi_px": 1e-3, "rotation": 1e-5}  # fmt: skip
# tracked: each ROI comes from the last frame's filtered landmarks, so the crop's float32
# differences feed back, and the heatmap refinement's window (whole cells, the centre cell
# truncated) amplifies them; measured over the bus shot's first 5 frames: x, y within
# 2.2 px (0.35 px without the refinement; median 0.035), z 2.4 px, visibility 9e-4,
# presence 8e-3, world 3.6e-3 m, ROI 0.08 px and 5.5e-5 rad, mask IoU 0.997
TRACKED = {"xy": 5.0, "z": 6.0, "median": 0.1, "visibility": 5e-3, "presence": 2e-2,
           "world": 1e-2, "roi_px": 0.25, "rotation": 2e-4}  # fmt: skip


def test_stills_are_the_cpu_decided_paths(clip):
    """Every frame detected: the detection's ROI, the crop, the decoding and the mask; and
    the decoding and the mask against BodyTracker's on the GPU's own model outputs and ROI
    (to float32 rounding: measured x, y within 6e-4 px, z 4e-5 px, the rest 1e-7, the
    mask 3e-5)."""
    options = {"static_image_mode": True, "enable_segmentation": True}
    with Pose(**options, **GPU) as gpu, _cpu_decided(**options) as cpu:
        assert gpu.program is not None
        for frame in (clip["bus"][0], clip["car"][0]):
            got, want = gpu.process(frame), cpu.process(frame)
            assert got.landmarks is not None and not got.tracked and got.detections
            _same_pose(got, want, **STILL)
            body = cpu.body._decode(*_model_outputs(gpu), tracked=False)
            px = np.abs(got.landmarks - body.landmarks[:, :3]) * (640, 480, 640)
            assert px[:, :2].max() < 5e-3 and px[:, 2].max() < 1e-2
            np.testing.assert_allclose(got.visibility, body.visibility, atol=1e-6)
            np.testing.assert_allclose(got.presence, body.presence, atol=1e-6)
            np.testing.assert_allclose(got.world_landmarks, body.world, atol=1e-6)
            np.testing.assert_allclose(got.mask, body.mask, atol=2e-4)


def _model_outputs(pose) -> tuple[dict, tuple, Rect]:
    """The GPU frame's last landmark model outputs, crop padding and ROI, read back."""
    q, frame = CTX.device.queue, pose.program
    engine = pose.engines["pose_landmark"]
    out = {}
    for name in pose.body.outputs:
        lay = engine.tensor_layout(name)
        out[name] = unpack(lay, q.read_buffer(lay.buffer, lay.offset, lay.size))
    slot = np.frombuffer(q.read_buffer(frame.slot), np.float32).reshape(-1, 4).astype(np.float64)
    (cx, cy, w, h), rotation = slot[2], slot[3, 0]
    fw, fh = SIZE
    return out, tuple(slot[4]), Rect(cx / fw, cy / fh, w / fw, h / fh, float(rotation))


def test_tracking_follows_the_cpu_decided_path(clip, video):
    """Tracked frames on the Python clock: the filters, the next ROI, the mask; the
    filters against smoothing.py's on the GPU's own raw body (float32 state both: to
    float32 rounding), and the next ROI against pose_roi on its filtered auxiliary points."""
    gpu, cpu = video
    gpu.reset()
    cpu.reset()
    q, frame = CTX.device.queue, gpu.program
    landmarks = LandmarksSmoother(0.05, 80.0, 1.0)
    visibility = VisibilitySmoother(0.1)
    world = LandmarksSmoother(0.1, 40.0, 1.0, disable_value_scaling=True)
    aux = LandmarksSmoother(0.01, 10.0, 1.0)
    results = []
    for k, f in enumerate(clip["bus"]):
        got, want = gpu.process(f), cpu.process(f)
        results.append(got)
        _same_pose(got, want, **(STILL if k == 0 else TRACKED))
        raw = np.frombuffer(q.read_buffer(frame.decoded), np.float32).reshape(-1, 4)
        raw = raw.astype(np.float64)
        body, points = raw[1 : 1 + NUM_BODY], raw[1 + NUM_BODY : 3 + NUM_BODY, :3]
        t_ns, scale = (k + 1) * 33_333_000, BodyTracker._object_scale(points, SIZE)
        px = (got.landmarks - landmarks(body[:, :3], t_ns, SIZE, scale)) * (640, 480, 640)
        assert np.abs(px).max() < 2e-4  # measured 4e-5 px
        np.testing.assert_allclose(got.visibility, visibility(body[:, 3]), atol=1e-6)
        want_world = world(raw[1 + NUM_LANDMARKS : 1 + NUM_LANDMARKS + NUM_BODY, :3], t_ns)
        np.testing.assert_allclose(got.world_landmarks, want_world, atol=1e-6)
        pose = np.frombuffer(q.read_buffer(frame.pose), np.float32).reshape(-1, 4)
        filtered = pose[1 + 2 * NUM_BODY : 3 + 2 * NUM_BODY, :3].astype(np.float64)
        np.testing.assert_allclose(filtered, aux(points, t_ns, SIZE, scale), atol=1e-6)
        tracked = np.frombuffer(q.read_buffer(frame.tracked), np.float32).reshape(-1, 4)
        nxt = pose_roi(filtered[:, :2], SIZE)
        assert tracked[0, 0] == 1.0
        np.testing.assert_allclose(tracked[1], [nxt.x_center * 640, nxt.y_center * 480,
                                                nxt.width * 640, nxt.height * 480],
                                   atol=2e-3)  # fmt: skip
        assert tracked[2, 0] == pytest.approx(nxt.rotation, abs=1e-5)
    assert [r.tracked for r in results] == [False, True, True, True, True]
    assert [r.detections is not None for r in results] == [True, False, False, False, False]


def test_a_lost_body_restarts_the_landmark_filters(clip, video):
    """A black frame after a tracked body (on timestamps, the first at 0 ms: the filters'
    frequency stays 30 there, as MediaPipe's): lost on both paths; re-detected after; the
    landmarks and ROIs then those of a run started afresh at the same times (the landmark
    and auxiliary filters restarted), the world landmarks not (their filter kept its state,
    and with it the paths' earlier difference: measured 2.8e-3 m after the gap)."""
    gpu, cpu = video
    bus = clip["bus"]
    sequence = [bus[0], bus[1], np.zeros_like(bus[0]), bus[2], bus[3]]
    lost = 2
    for pose in video:
        pose.reset()
    got = []
    redetected = {**STILL, "visibility": TRACKED["visibility"], "world": TRACKED["world"]}
    for i, f in enumerate(sequence):
        got.append(gpu.process(f, 33 * i))
        tolerance = STILL if i == 0 else redetected if i == lost + 1 else TRACKED
        _same_pose(got[-1], cpu.process(f, 33 * i), **tolerance)
    assert got[lost].landmarks is None and got[lost].roi is None and got[lost].mask is None
    after = got[lost + 1 :]
    assert not after[0].tracked and after[0].detections and after[1].tracked
    gpu.reset()
    fresh = [gpu.process(f, 33 * i) for i, f in enumerate(sequence) if i > lost]
    for g, f in zip(after, fresh, strict=True):
        assert g.roi == f.roi
        np.testing.assert_array_equal(g.landmarks, f.landmarks)
    assert not np.array_equal(after[0].world_landmarks, fresh[0].world_landmarks)


def test_one_submit_a_frame_and_nothing_read_on_the_apps_path(clip, video):
    gpu, _ = video
    gpu.reset()
    for f in clip["bus"][:2]:
        gpu.process(f)
        assert gpu.last_frame_counts == (1, 1)  # process(): the frame, its one read
    gpu.reset()
    for frame in clip["bus"][:2]:
        assert gpu.prepare_frame(frame) is None and gpu.last_frame_counts == (0, 0)
        view, _ = gpu.backend.frames(frame)
        encoder = CTX.device.create_command_encoder()
        for _, encode in gpu.steps(view):
            encode(encoder)
        CTX.device.queue.submit([encoder.finish()])
    tally = np.frombuffer(CTX.device.queue.read_buffer(gpu.gpu.tally), np.uint32)
    args = np.frombuffer(CTX.device.queue.read_buffer(gpu.gpu.args), np.uint32)
    points = np.frombuffer(CTX.device.queue.read_buffer(gpu.gpu.points), np.float32)
    got = gpu.read()  # the last frame, read back when asked
    assert list(tally) == [1, 0, 1, 1]  # a body, no detections used, a ROI, tracked
    assert args[1] == gpu.gpu.pairs and args[5] == NUM_BODY
    shown = points.reshape(-1, 4)[:, 3]
    np.testing.assert_array_equal(shown, (got.visibility >= 0.5).astype(np.float32))
    np.testing.assert_allclose(points.reshape(-1, 4)[:, :2], got.landmarks_px[:, :2], atol=1e-3)
