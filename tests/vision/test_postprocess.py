"""GPU post-processing: SSD decode + weighted NMS, detection -> ROI, landmark projection.

Oracles: engine.vision.ssd (decode, threshold, weighted NMS, projection), and the numpy
`roi_from_detection` / `rect_matrix` / `project_landmarks` written from MediaPipe's
calculators (checked on hand-computed cases first, without a GPU).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from engine.gpu.engine import Engine, TensorLayout
from engine.vision import (
    DetectionRoi,
    LandmarkProjector,
    Rect,
    RoiOptions,
    SsdDecoder,
    invert_affine,
    normalize_radians,
    project_landmarks,
    rect_matrix,
    roi_from_detection,
)
from engine.vision.image_to_tensor import image_to_tensor
from engine.vision.preprocess import Preprocessor
from engine.vision.ssd import (
    BLAZEFACE_SHORT,
    detect_faces,
    letterbox_matrix,
    ssd_anchors,
)
from tests.helpers.files import model_file

# ---- numpy oracles on hand-computed cases (no GPU) -----------------------------------------


def _apply(m, pts):
    return np.asarray(pts, np.float64) @ np.asarray(m)[:, :2].T + np.asarray(m)[:, 2]


def test_normalize_radians():
    assert normalize_radians(0.0) == 0.0
    assert normalize_radians(math.pi) == pytest.approx(-math.pi)  # [-pi, pi)
    assert normalize_radians(-math.pi) == pytest.approx(-math.pi)
    assert normalize_radians(3 * math.pi / 2) == pytest.approx(-math.pi / 2)
    assert normalize_radians(-5 * math.pi / 2) == pytest.approx(-math.pi / 2)


def test_roi_level_eyes_square_long_scale():
    # Frame 200x100; box 40x20 px centred at (100, 50): normalised 0.4..0.6 x 0.4..0.6.
    box = (0.4, 0.4, 0.6, 0.6)
    kps = np.array([[0.45, 0.45], [0.55, 0.45]])  # eyes level: rotation 0
    r = roi_from_detection(box, kps, (200, 100))
    assert (r.x_center, r.y_center, r.rotation) == pytest.approx((0.5, 0.5, 0.0))
    # long side 40 px -> 60 px square: 60/200 wide, 60/100 high
    assert (r.width, r.height) == pytest.approx((0.3, 0.6))
    m = rect_matrix(r, (200, 100))
    np.testing.assert_allclose(m, [[60, 0, 70], [0, 60, 20]], atol=1e-12)
    np.testing.assert_allclose(_apply(m, [[0.5, 0.5]]), [[100, 50]])


@pytest.mark.parametrize(
    "end, rotation",
    [
        ((0.5, 0.7), math.pi / 2),  # second eye straight below the first: quarter turn
        ((0.5, 0.3), -math.pi / 2),  # straight above
        ((0.3, 0.5), -math.pi),  # reversed (pi normalised to -pi)
        ((0.7, 0.7), math.pi / 4),  # 45 degrees down-right (frame is square)
    ],
)
def test_roi_rotation_from_eye_vector(end, rotation):
    box = (0.4, 0.4, 0.6, 0.6)
    kps = np.array([[0.5, 0.5], end])
    r = roi_from_detection(box, kps, (100, 100))
    assert r.rotation == pytest.approx(rotation)
    m = rect_matrix(r, (100, 100))
    side = 20 * 1.5
    # the crop's u axis runs along the eye vector: eyes are level in the crop
    u_axis = _apply(m, [[1, 0.5]]) - _apply(m, [[0, 0.5]])
    eye = np.subtract(end, (0.5, 0.5))
    np.testing.assert_allclose(u_axis[0], side * eye / np.linalg.norm(eye), atol=1e-9)
    np.testing.assert_allclose(_apply(m, [[0.5, 0.5]]), [[50, 50]], atol=1e-9)


def test_roi_quarter_turn_matrix_by_hand():
    r = Rect(0.5, 0.5, 0.3, 0.3, math.pi / 2)  # 30x30 px in a 100x100 frame
    m = rect_matrix(r, (100, 100))
    # u -> +y, v -> -x: (u, v) = (0, 0) is the top-right corner on screen
    np.testing.assert_allclose(m, [[0, -30, 65], [30, 0, 35]], atol=1e-12)
    back = _apply(invert_affine(m), [[65, 35], [50, 50]])
    np.testing.assert_allclose(back, [[0, 0], [0.5, 0.5]], atol=1e-12)


def test_roi_target_angle_shift_and_square_short():
    # target 90 degrees with level eyes: rotation pi/2; a shift moves along the rotated axes.
    opts = RoiOptions(target_angle_degrees=90, shift_x=0.0, shift_y=0.5, scale_x=1, scale_y=1,
                      square_long=False, square_short=True)  # fmt: skip
    box = (0.2, 0.4, 0.6, 0.6)  # 40x20 px in 100x100
    r = roi_from_detection(box, [[0.3, 0.5], [0.5, 0.5]], (100, 100), opts)
    assert r.rotation == pytest.approx(math.pi / 2)
    # y_shift of 0.5 * height (20 px) rotated by 90 degrees: (-sin, cos) * 10 px = (-10, 0)
    assert (r.x_center * 100, r.y_center * 100) == pytest.approx((30, 50))
    assert (r.width * 100, r.height * 100) == pytest.approx((20, 20))  # short side


def test_project_landmarks_matches_the_crop_affine():
    rng = np.random.default_rng(0)
    raw = rng.uniform(0, 192, (468, 3))
    for rotation in (0.0, 0.3, math.pi / 2, -2.0):
        rect = Rect(0.4, 0.6, 0.3, 0.4, rotation)  # 120x120 px in a 400x300 frame
        got = project_landmarks(raw, rect, (400, 300), (192, 192))
        want = _apply(rect_matrix(rect, (400, 300)), raw[:, :2] / 192)
        np.testing.assert_allclose(got[:, :2], want, atol=1e-9)
        np.testing.assert_allclose(got[:, 2], raw[:, 2] / 192 * 120)


# ---- GPU (marked gpu: each needs an adapter; the numpy cases above always run) ---------


def _ctx():
    from tests.helpers.gpu import gpu_context

    return gpu_context()


def _frame_texture(rgb: np.ndarray):
    import wgpu

    h, w, _ = rgb.shape
    rgba = np.ascontiguousarray(np.concatenate([rgb, np.full((h, w, 1), 255, np.uint8)], axis=2))
    tex = _ctx().device.create_texture(
        size=(w, h, 1),
        format=wgpu.TextureFormat.rgba8unorm,
        usage=wgpu.TextureUsage.TEXTURE_BINDING | wgpu.TextureUsage.COPY_DST,
    )
    _ctx().device.queue.write_texture(
        {"texture": tex}, rgba, {"bytes_per_row": w * 4, "rows_per_image": h}, (w, h, 1)
    )
    return tex


ANCHORS = ssd_anchors(BLAZEFACE_SHORT)


def _phwc4(a: np.ndarray, dtype=np.float32) -> np.ndarray:
    """[N, C] -> PHWC4 vec4s [S, N, 4]."""
    n, c = a.shape
    s = -(-c // 4)
    out = np.zeros((n, s * 4), dtype)
    out[:, :c] = a
    return np.ascontiguousarray(out.reshape(n, s, 4).transpose(1, 0, 2))


def _layout(name, shape, data, precision="fp32"):
    import wgpu

    arr = data.reshape(shape[-2], shape[-1])
    packed = _phwc4(arr, np.float16 if precision == "fp16" else np.float32)
    buf = _ctx().device.create_buffer_with_data(
        data=packed, usage=wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_DST
    )
    c = shape[-1]
    return TensorLayout(name, tuple(shape), (1, 1, shape[-2], c), -(-c // 4), precision, buf,
                        0, buf.size)  # fmt: skip


def _read_phwc4(lay) -> np.ndarray:
    b, h, w, c = lay.phwc4
    raw = _ctx().device.queue.read_buffer(lay.buffer, lay.offset, lay.size)
    a = np.frombuffer(raw, np.float32, lay.slices * b * h * w * 4).reshape(lay.slices, -1, 4)
    return a.transpose(1, 0, 2).reshape(b * h * w, -1)[:, :c].reshape(lay.shape).copy()


def _raw_for(boxes_kps: dict[int, tuple], n=896):
    """Raw regressors / logits that decode to the given {anchor: (box, kps, logit)}; every
    other anchor gets logit -10 (score ~4.5e-5)."""
    reg = np.zeros((n, 16), np.float32)
    cls = np.full((n, 1), -10.0, np.float32)
    for i, (box, kps, logit) in boxes_kps.items():
        acx, acy = ANCHORS[i, :2]
        x0, y0, x1, y1 = box
        reg[i, :4] = (
            ((x0 + x1) / 2 - acx) * 128,
            ((y0 + y1) / 2 - acy) * 128,
            (x1 - x0) * 128,
            (y1 - y0) * 128,
        )
        reg[i, 4:] = ((np.asarray(kps, np.float64) - (acx, acy)) * 128).reshape(-1)
        cls[i, 0] = logit
    return reg, cls


def _decode_on_gpu(reg, cls, precision="fp32", m=None, frame=(128, 128), **kwargs):
    layouts = (
        _layout("regressors", (1, 896, 16), reg, precision),
        _layout("classificators", (1, 896, 1), cls, precision),
    )
    dec = SsdDecoder(layouts, context=_ctx(), **kwargs)
    if m is not None:
        dec.set_frame_transform(m, frame)
    enc = _ctx().device.create_command_encoder()
    dec.encode(enc)
    _ctx().device.queue.submit([enc.finish()])
    return dec


def _assert_same(got, want, tol=1e-5):
    assert len(got) == len(want), (got.scores, want.scores)
    np.testing.assert_allclose(got.scores, want.scores, rtol=0, atol=1e-6)
    scale = max(1.0, float(np.abs(want.boxes).max())) if len(want) else 1.0
    np.testing.assert_allclose(got.boxes, want.boxes, rtol=0, atol=tol * scale)
    np.testing.assert_allclose(got.keypoints, want.keypoints, rtol=0, atol=tol * scale)


def _args(dec) -> np.ndarray:
    return np.frombuffer(_ctx().device.queue.read_buffer(dec.args), np.uint32)


def _cluster(rng, centre, size, count):
    """`count` jittered copies of a box around `centre` (tensor coords), with keypoints."""
    out = []
    for _ in range(count):
        cx, cy = np.add(centre, rng.normal(0, size * 0.05, 2))
        w, h = size * rng.uniform(0.9, 1.1, 2)
        box = (cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2)
        kps = np.add((cx, cy), rng.uniform(-w / 2, w / 2, (6, 2)))
        out.append((box, kps))
    return out


@pytest.mark.gpu
def test_nms_overlapping_groups_match_numpy():
    rng = np.random.default_rng(1)
    anchors = rng.permutation(896)
    spec = {}
    k = 0
    for centre, size, count in [((0.3, 0.3), 0.2, 5), ((0.35, 0.32), 0.2, 3),
                                ((0.7, 0.6), 0.15, 4), ((0.5, 0.85), 0.1, 1)]:  # fmt: skip
        for box, kps in _cluster(rng, centre, size, count):
            spec[int(anchors[k])] = (box, kps, rng.uniform(0.2, 4.0))
            k += 1
    reg, cls = _raw_for(spec)
    m = letterbox_matrix((640, 480))
    dec = _decode_on_gpu(reg, cls, m=m, frame=(640, 480))
    want = detect_faces(reg, cls)
    assert len(want) >= 3
    got = dec.read()
    _assert_same(got, want)
    assert got.candidates == k and got.left_out == 0
    assert got.group_sizes.sum() == k
    _assert_same(dec.read("frame_px"), detect_faces(reg, cls, m), tol=1e-5)
    norm = dec.read("frame_norm")
    px = detect_faces(reg, cls, m)
    np.testing.assert_allclose(norm.boxes, px.boxes / (640, 480, 640, 480), atol=1e-6)
    np.testing.assert_allclose(norm.keypoints, px.keypoints / (640, 480), atol=1e-6)
    assert list(_args(dec)) == [6, len(want), 0, 0]


@pytest.mark.gpu
def test_nms_equal_scores_rank_by_anchor_index():
    # Two separate clusters whose best boxes tie, members tying with their best too.
    a = (0.2, 0.2, 0.4, 0.4)
    b = (0.6, 0.6, 0.8, 0.8)
    kp = np.full((6, 2), 0.3)
    spec = {
        700: (b, kp + 0.4, 2.0),
        40: (a, kp, 2.0),
        41: ((0.21, 0.2, 0.41, 0.4), kp, 2.0),
        650: ((0.61, 0.6, 0.8, 0.8), kp + 0.4, 2.0),
        300: ((0.2, 0.21, 0.4, 0.41), kp, 1.0),
    }
    reg, cls = _raw_for(spec)
    dec = _decode_on_gpu(reg, cls)
    want = detect_faces(reg, cls)
    got = dec.read()
    _assert_same(got, want)
    assert list(got.anchor_index) == [40, 650]  # the lower anchor index wins a tie
    assert list(got.group_sizes) == [3, 2]


@pytest.mark.gpu
def test_nms_nothing_above_threshold_gives_zero_instances():
    reg, cls = _raw_for({})
    cls[5, 0] = -1e-3  # score just below 0.5
    dec = _decode_on_gpu(reg, cls)
    got = dec.read()
    assert len(got) == 0 and got.candidates == 0
    assert list(_args(dec)) == [6, 0, 0, 0]


@pytest.mark.gpu
def test_nms_score_exactly_half_is_kept_and_logits_clamped():
    spec = {10: ((0.1, 0.1, 0.2, 0.2), np.full((6, 2), 0.15), 0.0),  # sigmoid(0) = 0.5
            900 - 5: ((0.5, 0.5, 0.7, 0.7), np.full((6, 2), 0.6), 1e30)}  # fmt: skip
    reg, cls = _raw_for(spec)
    cls[100, 0] = -1e30
    want = detect_faces(reg, cls)
    got = _decode_on_gpu(reg, cls).read()
    _assert_same(got, want)
    assert list(got.scores) == [1.0, 0.5]


@pytest.mark.gpu
def test_nms_zero_area_best_box_stands_alone():
    spec = {
        3: ((0.3, 0.3, 0.3, 0.5), np.full((6, 2), 0.3), 5.0),  # zero width, best score
        4: ((0.25, 0.3, 0.35, 0.5), np.full((6, 2), 0.31), 3.0),
    }
    reg, cls = _raw_for(spec)
    want = detect_faces(reg, cls)
    got = _decode_on_gpu(reg, cls).read()
    _assert_same(got, want)
    assert list(got.group_sizes) == [1, 1]


@pytest.mark.gpu
def test_nms_more_groups_than_max_keeps_the_best():
    rng = np.random.default_rng(2)
    spec = {}
    for i, idx in enumerate(rng.choice(896, 30, replace=False)):  # 30 disjoint boxes
        x, y = (i % 6) * 0.16 + 0.02, (i // 6) * 0.19 + 0.02
        spec[int(idx)] = ((x, y, x + 0.1, y + 0.1), rng.uniform(0, 1, (6, 2)), rng.uniform(0, 5))
    reg, cls = _raw_for(spec)
    want = detect_faces(reg, cls)
    assert len(want) == 30
    dec = _decode_on_gpu(reg, cls, max_detections=16)
    got = dec.read()
    assert len(got) == 16 and got.left_out == 14 and got.candidates == 30
    _assert_same(got, type(want)(want.boxes[:16], want.keypoints[:16], want.scores[:16]))


@pytest.mark.gpu
@pytest.mark.parametrize("precision", ["fp32", "fp16"])
def test_nms_random_dense_candidates(precision):
    if precision == "fp16" and not _ctx().has_f16:
        pytest.skip("no shader-f16")
    rng = np.random.default_rng(3)
    reg = np.zeros((896, 16), np.float32)
    centres = rng.uniform(0.1, 0.9, (896, 2))
    reg[:, :2] = (centres - ANCHORS[:, :2]) * 128
    reg[:, 2:4] = rng.uniform(0.05, 0.3, (896, 2)) * 128
    reg[:, 4:] = rng.normal(0, 10, (896, 12))
    cls = rng.normal(0.5, 2.0, (896, 1)).astype(np.float32)
    if precision == "fp16":  # the oracle sees what the GPU buffer holds
        reg, cls = (
            reg.astype(np.float16).astype(np.float32),
            cls.astype(np.float16).astype(np.float32),
        )
    want = detect_faces(reg, cls)
    dec = _decode_on_gpu(reg, cls, precision=precision, max_detections=64)
    got = dec.read()
    n = min(64, len(want))
    assert got.candidates == int((1 / (1 + np.exp(-cls)) >= 0.5).sum())
    _assert_same(got, type(want)(want.boxes[:n], want.keypoints[:n], want.scores[:n]))


@pytest.mark.gpu
def test_nms_every_anchor_a_candidate_up_to_1024_detections():
    # 896 candidates, mostly disjoint tiny boxes: ~870 detections. Also guards the loop
    # budget (lavapipe stops an invocation's loops after 65535 iterations in total).
    rng = np.random.default_rng(5)
    reg = np.zeros((896, 16), np.float32)
    reg[:, :2] = (rng.uniform(0.1, 0.9, (896, 2)) - ANCHORS[:, :2]) * 128
    reg[:, 2:4] = 1.0
    reg[:, 4:] = rng.normal(0, 1, (896, 12))
    cls = rng.uniform(0, 3, (896, 1)).astype(np.float32)
    want = detect_faces(reg, cls)
    assert len(want) > 800
    dec = _decode_on_gpu(reg, cls, max_detections=1024)
    got = dec.read()
    assert got.candidates == 896 and got.left_out == 0
    _assert_same(got, want)
    assert list(_args(dec)) == [6, len(want), 0, 0]


@pytest.mark.gpu
def test_decoder_reruns_without_stale_state():
    reg, cls = _raw_for({5: ((0.1, 0.1, 0.3, 0.3), np.full((6, 2), 0.2), 3.0)})
    layouts = (
        _layout("regressors", (1, 896, 16), reg),
        _layout("classificators", (1, 896, 1), cls),
    )
    dec = SsdDecoder(layouts, context=_ctx())
    for logit, count in ((3.0, 1), (-3.0, 0), (3.0, 1)):
        cls[5, 0] = logit
        _ctx().device.queue.write_buffer(layouts[1].buffer, 0, _phwc4(cls))
        enc = _ctx().device.create_command_encoder()
        dec.encode(enc)
        _ctx().device.queue.submit([enc.finish()])
        assert len(dec.read()) == count and _args(dec)[1] == count


# ---- the live chain on the astronaut still -------------------------------------------------


@pytest.fixture(scope="module")
def chain(astronaut_rgb):
    """frame texture -> letterbox -> face detection -> decode/NMS -> ROI -> crop -> face mesh
    -> projection, all recorded in one encoder and submitted once."""
    frame = np.ascontiguousarray(astronaut_rgb[:384])  # 512x384
    size = (frame.shape[1], frame.shape[0])
    fd = Engine.from_tflite(model_file("face_detection_short_range"))
    lm = Engine.from_tflite(model_file("face_landmark"))
    pre_fd = Preprocessor(fd, "input", value_range=(-1.0, 1.0), border="zero")
    letterbox = letterbox_matrix(size, (128, 128))
    pre_fd.set_roi(letterbox)
    dec = SsdDecoder(fd)
    dec.set_frame_transform(letterbox, size)
    pre_lm = Preprocessor(lm, "input_1", value_range=(0.0, 1.0))
    roi = DetectionRoi(dec, pre_lm)
    proj = LandmarkProjector(lm, roi)
    view = _frame_texture(frame).create_view()
    enc = _ctx().device.create_command_encoder()
    pre_fd.encode(enc, view)
    fd.encode(enc)
    dec.encode(enc)
    roi.encode(enc)
    pre_lm.encode(enc, view)
    stats = lm.encode(enc)
    proj.encode(enc)
    _ctx().device.queue.submit([enc.finish()])
    assert (stats.uploads, stats.readbacks) == (0, 0)
    return dict(frame=frame, size=size, fd=fd, lm=lm, dec=dec, roi=roi, proj=proj,
                letterbox=letterbox)  # fmt: skip


@pytest.mark.gpu
def test_chain_detections_match_numpy(chain):
    fd, dec = chain["fd"], chain["dec"]
    reg, cls = (
        _read_phwc4(fd.tensor_layout("regressors")),
        _read_phwc4(fd.tensor_layout("classificators")),
    )
    got, want = dec.read(), detect_faces(reg, cls)
    assert len(want) == 1
    _assert_same(got, want)
    _assert_same(dec.read("frame_px"), detect_faces(reg, cls, chain["letterbox"]))
    assert list(_args(dec)) == [6, 1, 0, 0]


@pytest.mark.gpu
def test_chain_roi_matches_oracle(chain):
    dec, roi, size = chain["dec"], chain["roi"], chain["size"]
    det = dec.read("frame_norm")
    rect = roi_from_detection(det.boxes[0], det.keypoints[0], size)
    want = rect_matrix(rect, size)
    got = roi.read()
    assert got.valid and got.frame_size == size
    scale = np.abs(want).max()
    np.testing.assert_allclose(got.frame_from_tensor, want, atol=1e-5 * scale)
    np.testing.assert_allclose(got.tensor_from_frame, invert_affine(want), atol=1e-6)
    assert got.rotation == pytest.approx(rect.rotation, abs=1e-5)
    np.testing.assert_allclose(got.size, (rect.width * size[0], rect.height * size[1]), rtol=1e-5)
    assert 0.05 < rect.rotation < 0.25  # the astronaut's head is tilted ~5-10 degrees


@pytest.mark.gpu
def test_chain_landmarks_match_numpy_and_a_cpu_crop(chain):
    lm, proj, size = chain["lm"], chain["proj"], chain["size"]
    raw = _read_phwc4(lm.tensor_layout("conv2d_21")).reshape(-1)
    flag = float(_read_phwc4(lm.tensor_layout("conv2d_31")).reshape(-1)[0])
    det = chain["dec"].read("frame_norm")
    rect = roi_from_detection(det.boxes[0], det.keypoints[0], size)
    got = proj.read()
    assert got.present and got.roi_valid and flag > 0
    assert got.presence == pytest.approx(1 / (1 + math.exp(-flag)), abs=1e-6)
    assert list(got.args) == [6, 468, 0, 0]
    want = project_landmarks(raw, rect, size, (192, 192))
    np.testing.assert_allclose(got.points[:, :3], want, atol=1e-5 * np.abs(want).max())
    np.testing.assert_allclose(got.normalised[:, :2], want[:, :2] / size, atol=1e-6)
    assert (got.points[:, 3] == 1).all()
    # The same crop on the CPU (the numpy image_to_tensor, the oracle's matrix) through the
    # same engine: the GPU ROI copy into the preprocessor really set the crop.
    crop = image_to_tensor(chain["frame"], rect_matrix(rect, size), (192, 192), (0.0, 1.0))
    cpu = lm.run({"input_1": crop})
    cpu_pts = project_landmarks(cpu["conv2d_21"], rect, size, (192, 192))
    err = np.linalg.norm(got.points[:, :2] - cpu_pts[:, :2], axis=1)
    assert err.max() < 1.5, err.max()  # pixels, bilinear sampling differences only
    # nose tip (mesh 1) near the detector's nose keypoint (2), within 10% of the crop
    nose = chain["dec"].read("frame_px").keypoints[0, 2]
    assert np.linalg.norm(got.points[1, :2] - nose) < 0.1 * rect.width * size[0]


# ---- ROI and projection edge cases ----------------------------------------------------------


@pytest.fixture(scope="module")
def landmark_engine():
    return Engine.from_tflite(model_file("face_landmark"))


def _run(*stages):
    enc = _ctx().device.create_command_encoder()
    for s in stages:
        s.encode(enc)
    _ctx().device.queue.submit([enc.finish()])


def _write_landmarks(engine, raw, flag):
    q = _ctx().device.queue
    lay = engine.tensor_layout("conv2d_21")
    q.write_buffer(lay.buffer, lay.offset, np.asarray(raw, np.float32).reshape(-1))
    fl = engine.tensor_layout("conv2d_31")
    q.write_buffer(fl.buffer, fl.offset, np.array([flag, 0, 0, 0], np.float32))


@pytest.mark.gpu
def test_roi_keeps_last_matrix_when_no_detection():
    kps = [[0.35, 0.35], [0.45, 0.4]] + [[0.4, 0.4]] * 4
    reg, cls = _raw_for({200: ((0.3, 0.3, 0.5, 0.5), kps, 3.0)})
    layouts = (
        _layout("regressors", (1, 896, 16), reg),
        _layout("classificators", (1, 896, 1), cls),
    )
    dec = SsdDecoder(layouts, context=_ctx())
    dec.set_frame_transform(letterbox_matrix((320, 240)), (320, 240))
    roi = DetectionRoi(dec)
    _run(dec, roi)
    first = roi.read()
    det = dec.read("frame_norm")
    want = rect_matrix(roi_from_detection(det.boxes[0], det.keypoints[0], (320, 240)), (320, 240))
    assert first.valid and first.frame_size == (320, 240)
    np.testing.assert_allclose(first.frame_from_tensor, want, atol=1e-4)
    # letterbox 320x240 -> 128: 2.5 px per tensor unit / 128 in x and y alike
    assert first.rotation == pytest.approx(math.atan2(0.05, 0.1), abs=1e-5)
    cls[200, 0] = -3.0  # the face is gone
    _ctx().device.queue.write_buffer(layouts[1].buffer, 0, _phwc4(cls))
    _run(dec, roi)
    second = roi.read()
    assert not second.valid
    np.testing.assert_allclose(second.frame_from_tensor, first.frame_from_tensor)


@pytest.mark.gpu
@pytest.mark.parametrize("rotation", [0.0, math.pi / 2, -0.7])
def test_landmark_projection_with_a_rotated_roi(landmark_engine, rotation):
    rng = np.random.default_rng(4)
    raw = rng.uniform(0, 192, (468, 3)).astype(np.float32)
    _write_landmarks(landmark_engine, raw, 2.0)
    reg, cls = _raw_for({})
    dec = _decode_on_gpu(reg, cls)
    roi = DetectionRoi(dec)
    rect = Rect(0.45, 0.55, 0.25, 0.25 * 640 / 480, rotation)  # square in pixels
    roi.set(rect_matrix(rect, (640, 480)), (640, 480))
    proj = LandmarkProjector(landmark_engine, roi)
    _run(proj)
    got = proj.read()
    want = project_landmarks(raw, rect, (640, 480), (192, 192))
    np.testing.assert_allclose(got.points[:, :3], want, atol=1e-5 * np.abs(want).max())
    assert got.present and list(got.args) == [6, 468, 0, 0]


@pytest.mark.gpu
@pytest.mark.parametrize("flag, valid, instances", [(-2.0, True, 0), (0.0, True, 0),
                                                    (2.0, False, 0), (2.0, True, 468)])  # fmt: skip
def test_face_flag_off_or_no_roi_gives_zero_instances(landmark_engine, flag, valid, instances):
    _write_landmarks(landmark_engine, np.zeros(1404), flag)
    reg, cls = _raw_for({})
    roi = DetectionRoi(_decode_on_gpu(reg, cls))
    roi.set(letterbox_matrix((192, 192), (192, 192)), (192, 192), valid=valid)
    proj = LandmarkProjector(landmark_engine, roi, vertex_count=1)
    _run(proj)
    got = proj.read()
    assert list(got.args) == [1, instances, 0, 0]
    assert got.present == (instances > 0)
    assert got.presence == pytest.approx(1 / (1 + math.exp(-flag)), abs=1e-6)
