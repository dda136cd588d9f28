"""Image -> tensor: the numpy path against MediaPipe's transform written from its definition,
and the GPU pre-process against the numpy path (engine/vision/image_to_tensor.py)."""

from __future__ import annotations

import math

import cv2
import numpy as np
import pytest

from engine.gpu.engine import Engine
from engine.model.importer import load_tflite
from engine.reference import Interpreter
from engine.vision.image_to_tensor import (
    image_to_tensor,
    pad_roi,
    stretch_matrix,
    subrect_matrix,
)
from engine.vision.preprocess import Preprocessor
from engine.vision.ssd import detect_faces, iou, letterbox, letterbox_matrix
from tests.data.mediapipe.make_reference import TENSOR_CASES
from tests.helpers.files import ROOT, model_file
from tests.helpers.gpu import gpu_context

# (centre x, centre y, width, height, rotation, tensor (w, h), keep aspect): whole frame,
# letterbox, rotated crops reaching past the frame's edges, a wide tensor
ROIS = [
    (256, 200, 512, 400, 0.0, (256, 256), False),
    (256, 200, 512, 400, 0.0, (128, 128), True),
    (200, 150, 180, 180, 0.3, (192, 192), False),
    (420, 330, 260, 260, -2.0, (192, 192), False),
    (60, 40, 150, 110, 1.1, (96, 64), True),
]


def mediapipe_tensor(image, roi, size, value_range, border: str) -> np.ndarray:
    """MediaPipe 0.10's OpenCV converter, written from image_to_tensor_utils.cc (PadRoi)
    and image_to_tensor_converter_opencv.cc: cv::boxPoints of the (padded) rotated rect ->
    cv::getPerspectiveTransform onto the tensor's corners -> cv::warpPerspective ->
    convertTo(scale, offset). Independent of engine.vision's matrices."""
    cx, cy, w, h, rot, keep = roi
    tw, th = size
    if keep:  # PadRoi, in float32 as MediaPipe
        t_aspect, r_aspect = np.float32(th) / np.float32(tw), np.float32(h) / np.float32(w)
        if t_aspect > r_aspect:
            h = w * t_aspect
        else:
            w = h / t_aspect
    box = cv2.boxPoints(((cx, cy), (w, h), rot * 180.0 / math.pi)).astype(np.float32)
    corners = np.array([[0, th], [0, 0], [tw, 0], [tw, th]], np.float32)
    m = cv2.getPerspectiveTransform(box, corners)
    mode = cv2.BORDER_CONSTANT if border == "zero" else cv2.BORDER_REPLICATE
    warped = cv2.warpPerspective(image, m, (tw, th), flags=cv2.INTER_LINEAR, borderMode=mode)
    lo, hi = value_range
    return (warped.astype(np.float32) * np.float32((hi - lo) / 255.0) + np.float32(lo))[None]


def _ours(roi, size) -> np.ndarray:
    cx, cy, w, h, rot, keep = roi
    if keep:
        w, h = pad_roi(w, h, size)
    return subrect_matrix(cx, cy, w, h, rot)


_BORDER = {"BORDER_ZERO": "zero", "BORDER_REPLICATE": "replicate"}


def _first_clip_frame() -> np.ndarray:
    from tests.helpers.media import read_video, sample_clip

    return np.ascontiguousarray(read_video(sample_clip(), 1)[0][:, :, ::-1])


def _levels(a: np.ndarray, b: np.ndarray, value_range) -> np.ndarray:
    """|a - b| in 8-bit levels."""
    lo, hi = value_range
    return np.abs(a - b) * 255.0 / (hi - lo)


@pytest.mark.parametrize("border", ["zero", "replicate"])
@pytest.mark.parametrize("roi", ROIS, ids=[f"roi{i}" for i in range(len(ROIS))])
def test_numpy_path_geometry_matches_opencv_with_mediapipes_matrix(astronaut_rgb, roi, border):
    """Against the installed OpenCV, whatever its version: newer OpenCVs interpolate in
    float, not OpenCV 3.4's 1/32 px steps, so a few levels apart where the image is steep;
    a half-pixel shift of the grid would be tens of levels apart on every edge."""
    image = np.ascontiguousarray(astronaut_rgb[:400])  # 512x400
    *rect, size, keep = roi
    got = image_to_tensor(image, _ours((*rect, keep), size), size, (-1.0, 1.0), border)
    want = mediapipe_tensor(image, (*rect, keep), size, (-1.0, 1.0), border)
    d = _levels(got, want, (-1.0, 1.0))
    assert d.max() <= 5.0 and d.mean() < 0.2, (d.max(), d.mean())


def _mediapipe_cases():
    path = ROOT / "tests" / "data" / "mediapipe" / "image_to_tensor.npz"
    return np.load(path)


@pytest.mark.parametrize("case", list(TENSOR_CASES))
def test_numpy_path_matches_mediapipes_own_tensors(case):
    """MediaPipe 0.10.14's ImageToTensorCalculator output (tests/data/
    mediapipe/make_reference.py) on the clip's first frame: the same 8-bit values."""
    data = _mediapipe_cases()
    frame = _first_clip_frame()
    w, h, keep, lo, hi, border, roi = TENSOR_CASES[case]
    fw, fh = frame.shape[1], frame.shape[0]
    if roi is None:
        m = letterbox_matrix((fw, fh), (w, h)) if keep else stretch_matrix((fw, fh))
    else:
        cx, cy, rw, rh, rot = roi[0] * fw, roi[1] * fh, roi[2] * fw, roi[3] * fh, roi[4]
        if keep:
            rw, rh = pad_roi(rw, rh, (w, h))
        m = subrect_matrix(cx, cy, rw, rh, rot)
    ours = image_to_tensor(frame, m, (w, h), (0.0, 255.0), _BORDER[border])[0]
    d = np.abs(ours - data[case].astype(np.float32))
    # float32 matrices in MediaPipe, float64 here: a coordinate on a 1/64 px rounding edge
    # may step differently (measured: at most 1e-4 of the values, one level)
    assert d.max() <= 1.0 and (d > 0).mean() < 1e-3, (d.max(), (d > 0).mean())


def test_matrix_is_mediapipes_rotated_subrect_transform():
    """GetRotatedSubRectToRectTransformMatrix (normalised 4x4, row-major) as written in
    image_to_tensor_utils.cc, against subrect_matrix divided by the frame size."""
    fw, fh = 640, 480
    for cx, cy, a, b, rot in [(320, 240, 640, 480, 0.0), (300, 200, 250, 300, 0.7),
                              (10, 470, 90, 60, -2.9)]:  # fmt: skip
        c, d, g, h = math.cos(rot), math.sin(rot), 1.0 / fw, 1.0 / fh
        row0 = [a * c * g, -b * d * g, (-0.5 * a * c + 0.5 * b * d + cx) * g]
        row1 = [a * d * h, b * c * h, (-0.5 * b * c - 0.5 * a * d + cy) * h]
        ours = subrect_matrix(cx, cy, a, b, rot) / np.array([[fw], [fh]])
        np.testing.assert_allclose(ours, [row0, row1], atol=1e-12)


def test_pad_roi_by_hand():
    assert pad_roi(640, 480, (128, 128)) == (640, 640)  # landscape frame: pad top/bottom
    assert pad_roi(300, 600, (128, 128)) == (600, 600)  # portrait: pad left/right
    assert pad_roi(256, 256, (256, 144)) == (256 / (144 / 256), 256)
    m = letterbox_matrix((640, 480), (128, 128))
    np.testing.assert_allclose(m, [[640, 0, 0], [0, 640, -80]])  # the ROI's corners
    np.testing.assert_allclose(stretch_matrix((640, 480)), [[640, 0, 0], [0, 480, 0]])


def test_corners_map_to_corners():
    """Tensor element (0, 0) reads frame pixel (0, 0) exactly; element i reads i * W / w."""
    image = np.arange(8 * 8 * 3, dtype=np.uint8).reshape(8, 8, 3)
    t = image_to_tensor(image, stretch_matrix((8, 8)), (4, 4), (0.0, 255.0))[0]
    np.testing.assert_array_equal(t, image[::2, ::2].astype(np.float32))


# ---- the GPU pre-process ------------------------------------------------------------------

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


@pytest.fixture(scope="module")
def engines():
    return {
        name: Engine(load_tflite(model_file(name)))
        for name in ("face_detection_short_range", "face_landmark", "selfie_segmentation")
    }


def _gpu_tensor(engine, input_name, value_range, border, m, frame) -> np.ndarray:
    pre = Preprocessor(engine, input_name, value_range=value_range, border=border)
    pre.set_roi(m)
    encoder = CTX.device.create_command_encoder()
    pre.encode(encoder, _frame_texture(frame).create_view())
    CTX.device.queue.submit([encoder.finish()])
    lay = engine.tensor_layout(input_name)
    _, h, w, _ = lay.phwc4
    raw = CTX.device.queue.read_buffer(lay.buffer, lay.offset, lay.size)
    got = np.frombuffer(raw, np.float32).reshape(h, w, 4)
    assert (got[:, :, 3] == 0).all()  # PHWC4 padding lane
    return got[None, :, :, :3]


@pytest.mark.parametrize(
    "model,input_name,value_range,border,roi",
    [
        ("face_detection_short_range", "input", (-1.0, 1.0), "zero", "letterbox"),
        ("selfie_segmentation", "input_1", (0.0, 1.0), "zero", "stretch"),
        ("face_landmark", "input_1", (0.0, 1.0), "replicate", (140, 120, 260, 260, 0.4)),
        ("face_landmark", "input_1", (0.0, 1.0), "zero", (420, 300, 250, 250, -2.5)),
    ],
)
def test_gpu_matches_numpy(engines, astronaut_rgb, model, input_name, value_range, border, roi):
    frame = np.ascontiguousarray(astronaut_rgb[40:440, 10:])  # 502x400
    size = (frame.shape[1], frame.shape[0])
    _, h, w, _ = engines[model].tensor_layout(input_name).phwc4
    if roi == "letterbox":
        m = letterbox_matrix(size, (w, h))
    elif roi == "stretch":
        m = stretch_matrix(size)
    else:
        m = subrect_matrix(*roi)
    got = _gpu_tensor(engines[model], input_name, value_range, border, m, frame)
    want = image_to_tensor(frame, m, (w, h), value_range, border)
    d = _levels(got, want, value_range)
    # the same integer arithmetic; f32 coordinates on a 1/64 px rounding edge may step
    # differently: measured on 0.01-0.03 % of the values, up to 3 levels where steep
    assert d.max() <= 4.0 + 1e-3 and (d > 1e-3).mean() < 1e-3, (d.max(), (d > 1e-3).mean())


def test_letterbox_on_gpu_then_face_detection(engines, astronaut_rgb):
    """Frame 512x384 -> letterbox 128x128 [-1, 1] on the GPU -> the model on the GPU: the
    same detection as the numpy letterbox on the reference interpreter."""
    frame = np.ascontiguousarray(astronaut_rgb[:384, :])
    engine = engines["face_detection_short_range"]
    m = letterbox_matrix((frame.shape[1], frame.shape[0]), (128, 128))
    tensor = _gpu_tensor(engine, "input", (-1.0, 1.0), "zero", m, frame)
    out = engine.run({"input": tensor})
    want_tensor, frame_from_tensor = letterbox(frame, (128, 128))
    want = Interpreter(engine.source_graph).run({"input": want_tensor})
    got_faces = detect_faces(out["regressors"], out["classificators"], frame_from_tensor)
    want_faces = detect_faces(want["regressors"], want["classificators"], frame_from_tensor)
    assert len(got_faces.boxes) == len(want_faces.boxes) == 1
    assert iou(got_faces.boxes[0], want_faces.boxes)[0] >= 0.99
