"""BlazeFace pre/post-processing: anchors, decode, NMS, letterbox, and the astronaut demo."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from engine.catalog.manifest import load_manifest
from engine.vision.ssd import (
    BLAZEFACE_SHORT,
    Detections,
    SsdSpec,
    decode_boxes,
    detect_faces,
    iou,
    letterbox,
    letterbox_matrix,
    scores_from_logits,
    ssd_anchors,
    to_frame,
    to_tensor,
    weighted_nms,
)
from tests.helpers.files import ASSETS_DIR, ROOT, model_file

# ---- anchors --------------------------------------------------------------------------------


def test_anchor_count_and_hand_checked_centres():
    a = ssd_anchors()
    assert a.shape == (896, 4)
    assert np.all(a[:, 2:] == 1.0)  # fixed anchor size
    # stride 8: 16x16 grid, 2 anchors per cell; first cell centre (0.5/16, 0.5/16)
    np.testing.assert_allclose(a[0, :2], [1 / 32, 1 / 32])
    np.testing.assert_allclose(a[1, :2], [1 / 32, 1 / 32])
    np.testing.assert_allclose(a[2, :2], [3 / 32, 1 / 32])  # next column
    np.testing.assert_allclose(a[32, :2], [1 / 32, 3 / 32])  # next row (16 cells x 2)
    np.testing.assert_allclose(a[511, :2], [31 / 32, 31 / 32])
    # strides 16, 16, 16 merge: 8x8 grid, 6 anchors per cell
    np.testing.assert_allclose(a[512:518, :2], [[1 / 16, 1 / 16]] * 6)
    np.testing.assert_allclose(a[518, :2], [3 / 16, 1 / 16])
    np.testing.assert_allclose(a[-1, :2], [15 / 16, 15 / 16])


@pytest.mark.parametrize("entry", [m for m in load_manifest().models if m.postprocess])
def test_anchor_count_matches_every_ssd_model(entry):
    spec = SsdSpec.from_manifest(entry.postprocess)
    n = ssd_anchors(spec).shape[0]
    assert [o.shape[1] for o in entry.outputs] == [n, n]
    assert entry.outputs[0].shape[2] == 4 + 2 * spec.num_keypoints


def test_manifest_spec_is_the_default():
    entry = load_manifest().get("face_detection_short_range")
    assert SsdSpec.from_manifest(entry.postprocess) == BLAZEFACE_SHORT


# ---- decode and scores ----------------------------------------------------------------------


def test_decode_by_hand():
    anchors = np.array([[0.25, 0.5, 1.0, 1.0], [0.75, 0.75, 1.0, 1.0]], np.float32)
    raw = np.zeros((2, 16), np.float32)
    raw[0, :4] = [64, -32, 32, 16]  # cx +0.5, cy -0.25, w 0.25, h 0.125
    raw[0, 4:6] = [12.8, 0]  # keypoint 0: +0.1 in x
    boxes, kps = decode_boxes(raw, anchors)
    np.testing.assert_allclose(boxes[0], [0.625, 0.1875, 0.875, 0.3125], atol=1e-6)
    np.testing.assert_allclose(boxes[1], [0.75, 0.75, 0.75, 0.75])
    np.testing.assert_allclose(kps[0, 0], [0.35, 0.5], atol=1e-6)
    np.testing.assert_allclose(kps[1], [[0.75, 0.75]] * 6)


def test_scores_clamp_and_sigmoid():
    with np.errstate(all="raise"):
        s = scores_from_logits(np.array([[-1e4], [0.0], [1e4], [100.0], [-100.0]]))
    np.testing.assert_allclose(s, [0, 0.5, 1, 1, 0], atol=1e-30)
    assert s.dtype == np.float32


# ---- NMS ------------------------------------------------------------------------------------


def _det(boxes, scores, k=1):
    boxes = np.array(boxes, np.float64)
    kps = np.stack([boxes[:, :2]] * k, axis=1)  # keypoint = box corner, to check weighting
    return Detections(boxes, kps, np.array(scores, np.float32))


def test_iou_by_hand():
    b = np.array([0.0, 0.0, 1.0, 1.0])
    others = np.array([[0.5, 0, 1.5, 1], [1, 1, 2, 2], [0, 0, 1, 1], [2, 2, 2, 2]])
    np.testing.assert_allclose(iou(b, others), [1 / 3, 0, 1, 0])


def test_weighted_nms_merges_overlaps_and_keeps_best_score():
    det = _det(
        [[0, 0, 1, 1], [0.1, 0, 1.1, 1], [2, 2, 3, 3], [0.5, 0, 1.5, 1]],
        [0.9, 0.6, 0.8, 0.7],
    )
    out = weighted_nms(det, 0.3)
    # A (0.9) absorbs B (IoU 0.82) and D (IoU 1/3 > 0.3); C stands alone.
    assert len(out) == 2
    np.testing.assert_allclose(out.scores, [0.9, 0.8])
    w = np.array([0.9, 0.6, 0.7])
    xmin = (w * [0, 0.1, 0.5]).sum() / w.sum()
    xmax = (w * [1, 1.1, 1.5]).sum() / w.sum()
    np.testing.assert_allclose(out.boxes[0], [xmin, 0, xmax, 1], atol=1e-6)
    np.testing.assert_allclose(out.keypoints[0, 0], [xmin, 0], atol=1e-6)
    np.testing.assert_allclose(out.boxes[1], [2, 2, 3, 3])


def test_weighted_nms_threshold_is_strict_and_order_is_by_score():
    # IoU of these two is exactly 0.2 (< 0.3): both survive, highest score first.
    det = _det([[0, 0, 1, 1], [2 / 3, 0, 5 / 3, 1]], [0.55, 0.95])
    np.testing.assert_allclose(iou(det.boxes[0], det.boxes[1:]), [0.2])
    out = weighted_nms(det, 0.3)
    np.testing.assert_allclose(out.scores, [0.95, 0.55])
    np.testing.assert_allclose(out.boxes, det.boxes[::-1])


def test_weighted_nms_empty():
    out = weighted_nms(Detections(np.zeros((0, 4)), np.zeros((0, 6, 2)), np.zeros(0)), 0.3)
    assert len(out) == 0 and out.keypoints.shape == (0, 6, 2)


# ---- letterbox ------------------------------------------------------------------------------


def test_letterbox_round_trip_and_corners():
    m = letterbox_matrix((640, 480))
    # 640x480 -> scale 0.2 -> 128x96 content, 16 px border above and below
    np.testing.assert_allclose(to_tensor([[0, 0], [640, 480]], m), [[0, 0.125], [1, 0.875]])
    pts = np.random.default_rng(0).uniform(-50, 700, size=(100, 2))
    np.testing.assert_allclose(to_frame(to_tensor(pts, m), m), pts, atol=1e-9)
    tall = letterbox_matrix((300, 600))
    np.testing.assert_allclose(to_frame([[0.25, 0], [0.75, 1]], tall), [[0, 0], [300, 600]])


def test_letterbox_pixels():
    frame = np.full((480, 640, 3), 255, np.uint8)
    frame[:, :320, 0] = 0  # left half without red
    tensor, m = letterbox(frame)
    assert tensor.shape == (1, 128, 128, 3) and tensor.dtype == np.float32
    t = tensor[0]
    assert np.all(t[:16] == -1.0) and np.all(t[112:] == -1.0)  # black border -> -1
    assert np.all(t[16:112, :, 1:] == 1.0)  # white -> +1
    assert np.all(t[16:112, :63, 0] == -1.0) and np.all(t[16:112, 65:, 0] == 1.0)
    np.testing.assert_allclose(m, letterbox_matrix((640, 480)))


def test_letterbox_range_option():
    tensor, _ = letterbox(np.full((10, 20, 3), 255, np.uint8), (16, 16), (0.0, 1.0))
    assert tensor.min() == 0.0 and tensor.max() == 1.0


# ---- the demo -------------------------------------------------------------------------------


def _contains(box, point):
    return box[0] <= point[0] <= box[2] and box[1] <= point[1] <= box[3]


def test_demo_astronaut_one_face_engine_matches_litert(astronaut_rgb):
    """Engine reference interpreter vs LiteRT on the astronaut: one face, same box."""
    from app.demo_still import split_outputs
    from engine.reference.oracle import run_litert, run_reference

    model = model_file("face_detection_short_range")
    tensor, frame_from_tensor = letterbox(astronaut_rgb)
    ours = detect_faces(*split_outputs(run_reference(model, [tensor])), frame_from_tensor)
    assert len(ours) == 1, f"expected exactly one face, got {len(ours)}"
    box, kps = ours.boxes[0], ours.keypoints[0]
    assert ours.scores[0] > 0.75
    for name, i in (("right eye", 0), ("left eye", 1), ("mouth", 3)):
        assert _contains(box, kps[i]), f"{name} keypoint {kps[i]} outside box {box}"
    assert kps[0][0] < kps[1][0], "right eye (subject's) should be left in the image"
    assert kps[3][1] > max(kps[0][1], kps[1][1]), "mouth should be below the eyes"

    pytest.importorskip("ai_edge_litert", reason="LiteRT (ai-edge-litert) not installed")
    theirs = detect_faces(*split_outputs(run_litert(model, [tensor])), frame_from_tensor)
    assert len(theirs) == 1
    assert iou(box, theirs.boxes[:1])[0] > 0.95
    np.testing.assert_allclose(kps, theirs.keypoints[0], atol=1.0)  # frame pixels


def test_demo_cli_writes_png(tmp_path, astronaut_rgb):
    model = model_file("face_detection_short_range")
    out = tmp_path / "demo.png"
    proc = subprocess.run(
        [sys.executable, "-m", "app.demo_still", "--model", str(model),
         "--image", str(ASSETS_DIR / "astronaut.png"), "--output", str(out)],
        capture_output=True, text=True, cwd=ROOT,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert out.stat().st_size > 0
    assert "1 face(s)" in proc.stdout and "face 0: box" in proc.stdout


def test_demo_cli_missing_image_is_one_line_exit_2(tmp_path):
    model = tmp_path / "model.tflite"
    model.write_bytes(b"")  # never read: the image check fails first
    proc = subprocess.run(
        [sys.executable, "-m", "app.demo_still", "--model", str(model),
         "--image", str(tmp_path / "missing.png"), "--output", str(tmp_path / "o.png")],
        capture_output=True, text=True, cwd=ROOT,
    )  # fmt: skip
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "image not found" in lines[0], proc.stderr
    assert "Traceback" not in proc.stderr


def test_demo_cli_missing_model_is_one_line_exit_2(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "app.demo_still", "--model", str(tmp_path / "none.tflite")],
        capture_output=True, text=True, cwd=ROOT,
    )  # fmt: skip
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0 and "model not found" in proc.stderr
