"""BlazeFace (face_detection_short_range) pre- and post-processing in numpy.

- input: an RGB frame (H, W, 3) uint8; the model's `regressors` [1, 896, 16] and
  `classificators` [1, 896, 1]
- output: `Detections` in frame pixels: boxes (xmin, ymin, xmax, ymax), 6 keypoints, scores
- options: `SsdSpec` (anchors + decode), score threshold 0.5, NMS IoU 0.3
- usage: `tensor, frame_from_tensor = letterbox(frame)`; run the model;
  `detect_faces(regressors, classificators, frame_from_tensor)`

Each stage is a pure function on arrays so the GPU post-processing shaders can be tested
against it stage by stage. Facts from docs/models.md and MediaPipe's SsdAnchorsCalculator,
TensorsToDetectionsCalculator and NonMaxSuppressionCalculator (checked against the model):
1. letterbox: scale the frame by min(128 / W, 128 / H), centre it, black border (pixel 0,
   so -1.0 in the tensor), RGB mapped to [-1, 1]; MediaPipe's sampling convention
   (engine/vision/image_to_tensor.py: the ROI's corners are the tensor's corners);
2. anchors: 896 centres (fixed size 1x1), rows outer, columns inner, anchors innermost;
3. decode: cx = raw_x / 128 * anchor_w + anchor_cx, w = raw_w / 128 * anchor_w, likewise
   for y, h and the keypoints;
4. score = sigmoid(clamp(raw, -100, 100)), kept when >= 0.5 (MediaPipe drops score < thresh);
5. weighted NMS, IoU 0.3: best box + every box with IoU > 0.3 (itself included) become one
   score-weighted average box and keypoints with the best box's score; repeat on the rest;
6. back to frame pixels with the letterbox's inverse affine.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.vision import image_to_tensor

# The detector's options and anchors (stage 2) live in the engine, whose GPU decoder
# uses them too; re-exported here with the other stages.
from engine.vision.ssd_spec import BLAZEFACE_SHORT, SsdSpec, ssd_anchors  # noqa: F401

KEYPOINT_NAMES = (
    "right_eye",
    "left_eye",
    "nose_tip",
    "mouth_center",
    "right_ear_tragion",
    "left_ear_tragion",
)  # from the subject's point of view


@dataclass(frozen=True)
class Detections:
    """N detections: boxes [N, 4] (xmin, ymin, xmax, ymax), keypoints [N, K, 2], scores [N]."""

    boxes: np.ndarray
    keypoints: np.ndarray
    scores: np.ndarray

    def __len__(self) -> int:
        return int(self.scores.shape[0])


# ---- stage 1: letterbox --------------------------------------------------------------------


def letterbox_matrix(frame_size: tuple[int, int], size: tuple[int, int] = (128, 128)) -> np.ndarray:
    """2x3 affine taking normalised tensor coords ([0, 1] over the tensor) to frame pixels:
    the whole frame, aspect kept, centred (engine/vision/image_to_tensor.py's PadRoi)."""
    return image_to_tensor.letterbox_matrix(frame_size, size)


def letterbox(
    frame_rgb: np.ndarray, size: tuple[int, int] = (128, 128), value_range=(-1.0, 1.0)
) -> tuple[np.ndarray, np.ndarray]:
    """Letterbox an RGB uint8 frame into a [1, h, w, 3] float32 tensor in `value_range`.

    Returns (tensor, frame_from_tensor) where frame_from_tensor is `letterbox_matrix`.
    MediaPipe's sampling (image_to_tensor.py); the border is black (pixel 0, i.e.
    value_range[0]), as the face detection graph's BORDER_ZERO.
    """
    if frame_rgb.ndim != 3 or frame_rgb.shape[2] != 3:
        raise ValueError(f"expected an RGB frame (H, W, 3), got shape {frame_rgb.shape}")
    fh, fw = frame_rgb.shape[:2]
    m = letterbox_matrix((fw, fh), size)
    return image_to_tensor.image_to_tensor(frame_rgb, m, size, value_range, "zero"), m


def to_frame(points: np.ndarray, frame_from_tensor: np.ndarray) -> np.ndarray:
    """Map [..., 2] normalised tensor coords to frame pixels."""
    pts = np.asarray(points, dtype=np.float64)
    return pts @ frame_from_tensor[:, :2].T + frame_from_tensor[:, 2]


def to_tensor(points: np.ndarray, frame_from_tensor: np.ndarray) -> np.ndarray:
    """Inverse of `to_frame`: frame pixels -> normalised tensor coords."""
    a = frame_from_tensor[:, :2]
    return (np.asarray(points, dtype=np.float64) - frame_from_tensor[:, 2]) @ np.linalg.inv(a).T


# ---- stage 2: anchors -----------------------------------------------------------------------


# ---- stage 3: decode ------------------------------------------------------------------------


def decode_boxes(
    raw: np.ndarray, anchors: np.ndarray, spec: SsdSpec = BLAZEFACE_SHORT
) -> tuple[np.ndarray, np.ndarray]:
    """Raw regressors [N, 4 + 2K] -> boxes [N, 4] (xmin, ymin, xmax, ymax) and keypoints
    [N, K, 2], normalised to the input tensor."""
    raw = np.asarray(raw, dtype=np.float32).reshape(anchors.shape[0], -1)
    s = np.float32(spec.scale)
    acx, acy, aw, ah = (anchors[:, k] for k in range(4))
    cx = raw[:, 0] / s * aw + acx
    cy = raw[:, 1] / s * ah + acy
    w = raw[:, 2] / s * aw
    h = raw[:, 3] / s * ah
    boxes = np.stack([cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2], axis=1)
    k = spec.num_keypoints
    kp = raw[:, 4 : 4 + 2 * k].reshape(-1, k, 2)
    kx = kp[..., 0] / s * aw[:, None] + acx[:, None]
    ky = kp[..., 1] / s * ah[:, None] + acy[:, None]
    return boxes, np.stack([kx, ky], axis=-1)


# ---- stage 4: scores ------------------------------------------------------------------------


def scores_from_logits(raw: np.ndarray, clip: float = 100.0) -> np.ndarray:
    """sigmoid(clamp(raw, -clip, clip)) as float32 [N]."""
    x = np.clip(np.asarray(raw, dtype=np.float32).reshape(-1), -clip, clip)
    with np.errstate(over="ignore", under="ignore"):  # exp(100) is inf in float32: sigmoid 0
        return (np.float32(1.0) / (np.float32(1.0) + np.exp(-x))).astype(np.float32)


def threshold(
    boxes: np.ndarray, keypoints: np.ndarray, scores: np.ndarray, min_score: float = 0.5
) -> Detections:
    """Keep the detections with score >= min_score (anchor order kept)."""
    keep = scores >= min_score
    return Detections(boxes[keep], keypoints[keep], scores[keep])


# ---- stage 5: weighted NMS ------------------------------------------------------------------


def iou(box: np.ndarray, boxes: np.ndarray) -> np.ndarray:
    """IoU of one box [4] with boxes [N, 4] (xmin, ymin, xmax, ymax); 0 where nothing overlaps."""
    ix = np.minimum(box[2], boxes[:, 2]) - np.maximum(box[0], boxes[:, 0])
    iy = np.minimum(box[3], boxes[:, 3]) - np.maximum(box[1], boxes[:, 1])
    inter = np.clip(ix, 0, None) * np.clip(iy, 0, None)
    area = (box[2] - box[0]) * (box[3] - box[1])
    areas = (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])
    union = area + areas - inter
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where((inter > 0) & (union > 0), inter / union, 0.0)


def weighted_nms(det: Detections, iou_threshold: float = 0.3) -> Detections:
    """MediaPipe's WEIGHTED non-max suppression; output sorted by score, highest first."""
    order = np.argsort(-det.scores, kind="stable")
    boxes, kps, scores = [], [], []
    while order.size:
        best = order[0]
        overlap = iou(det.boxes[best], det.boxes[order])
        group = order[overlap > iou_threshold]
        if group.size == 0:  # degenerate (zero-area) best box: it stands alone
            group = order[:1]
        w = det.scores[group].astype(np.float64)
        boxes.append((det.boxes[group] * w[:, None]).sum(0) / w.sum())
        kps.append((det.keypoints[group] * w[:, None, None]).sum(0) / w.sum())
        scores.append(det.scores[best])
        order = order[~np.isin(order, group)]
    k = det.keypoints.shape[1] if det.keypoints.ndim == 3 else 0
    if not scores:
        return Detections(np.zeros((0, 4)), np.zeros((0, k, 2)), np.zeros((0,), np.float32))
    return Detections(np.array(boxes), np.array(kps), np.array(scores, dtype=np.float32))


# ---- stage 6: back to the frame ------------------------------------------------------------


def project(det: Detections, frame_from_tensor: np.ndarray) -> Detections:
    """Normalised tensor coords -> frame pixels (boxes stay axis-aligned: no rotation)."""
    corners = to_frame(det.boxes.reshape(-1, 2, 2), frame_from_tensor).reshape(-1, 4)
    return Detections(corners, to_frame(det.keypoints, frame_from_tensor), det.scores)


# ---- all stages -----------------------------------------------------------------------------


def detect_faces(
    regressors: np.ndarray,
    classificators: np.ndarray,
    frame_from_tensor: np.ndarray | None = None,
    spec: SsdSpec = BLAZEFACE_SHORT,
) -> Detections:
    """Decode + score + threshold + weighted NMS (+ projection to frame pixels when given)."""
    anchors = ssd_anchors(spec)
    boxes, kps = decode_boxes(regressors, anchors, spec)
    scores = scores_from_logits(classificators, spec.score_clip)
    det = weighted_nms(threshold(boxes, kps, scores, spec.min_score), spec.iou_threshold)
    return project(det, frame_from_tensor) if frame_from_tensor is not None else det
