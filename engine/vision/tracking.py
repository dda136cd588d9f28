"""Face-mesh tracking on the GPU: the next frame's ROI comes from this frame's landmarks.

MediaPipe's face_landmark_front_cpu.pbtxt, written from its definition:
1. while the previous frame's landmarks exist (the face flag passed min_tracking_confidence),
   the face detector is skipped and the landmark ROI is FaceLandmarkLandmarksToRoi of those
   landmarks (face_landmark_landmarks_to_roi.pbtxt): the box around all 468 landmarks,
   rotation from landmark 33 to landmark 263 (the outer eye corners), square on the long
   side, scaled 1.5;
2. otherwise the detector runs and the ROI is FaceDetectionFrontDetectionToRoi of its best
   detection (engine/vision/roi.py);
3. a frame whose face flag fails yields no landmarks, and the next frame detects again.

- numpy oracle: `roi_from_landmarks(points_px, frame_size) -> Rect`
- GPU: `RoiTracker(detection_roi, preprocessor)`: `buffer` is the chosen ROI (96 bytes, the
  layout of shaders/engine/roi_rect.wgsl; a LandmarkProjector reads it), `track` the ROI
  from the last landmarks; `attach(projector)` after the projector exists, then per frame
  `encode_select(enc)` before the landmark pre-process and `encode_update(enc)` after the
  projection. Without `encode_update` (static images) the detection ROI is always chosen.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from engine.gpu import Binding, bind_group, compute_pipeline, dispatch, render_shader, zeros_buffer
from engine.vision.roi import ROI_BYTES, Rect, RoiOptions, rect_params, roi_from_detection

# face_landmark_landmarks_to_roi.pbtxt: left side of the left eye -> right side of the right
LANDMARKS_ROI = RoiOptions(start_keypoint=33, end_keypoint=263)
# The group 0 of each shader, its declarations generated from these (ROI records:
# roi_rect.wgsl's 96 bytes). postprocess_roi_select.wgsl: the detection's and the tracked
# ROI in, the chosen one out.
SELECT_BINDINGS = (
    Binding("in", name="detected", type="array<vec4<f32>, 6>"),
    Binding("in", name="tracked", type="array<vec4<f32>, 6>"),
    Binding("out", name="roi", type="array<vec4<f32>, 6>"),
)
# postprocess_landmarks_roi.wgsl: the projected landmarks, their status and the ROI they
# were found in, then the tracked ROI written.
UPDATE_BINDINGS = (
    Binding("in", name="points", type="array<vec4<f32>>"),
    Binding("in", name="lm_status", type="array<f32>"),
    Binding("in", name="source_roi", type="array<vec4<f32>>"),
    Binding("out", name="roi", type="array<vec4<f32>>"),
)


def roi_from_landmarks(points_px, frame_size, options: RoiOptions = LANDMARKS_ROI) -> Rect:
    """The next frame's ROI from landmarks [N, >= 2] in frame pixels (float64)."""
    fw, fh = (float(v) for v in frame_size)
    norm = np.asarray(points_px, np.float64)[:, :2] / (fw, fh)
    box = (*norm.min(axis=0), *norm.max(axis=0))
    return roi_from_detection(box, norm, frame_size, options)


class RoiTracker:
    """Chooses each frame's landmark ROI on the GPU (see the module docstring)."""

    def __init__(self, detection_roi, preprocessor, options: RoiOptions = LANDMARKS_ROI):
        import wgpu

        self.ctx, self.detection_roi, self.preprocessor = (
            detection_roi.ctx,
            detection_roi,
            preprocessor,
        )
        self.options = options
        usage = wgpu.BufferUsage
        kind = usage.STORAGE | usage.UNIFORM | usage.COPY_SRC | usage.COPY_DST
        dev = self.ctx.device
        self.buffer = zeros_buffer(dev, ROI_BYTES, kind)
        self.track = zeros_buffer(dev, ROI_BYTES, kind)
        source = render_shader("postprocess_roi_select.wgsl", SELECT_BINDINGS)
        self.select_pipeline = compute_pipeline(self.ctx, source, "postprocess_roi_select")
        resources = {"detected": detection_roi.buffer, "tracked": self.track, "roi": self.buffer}
        self.select_group = bind_group(dev, self.select_pipeline, SELECT_BINDINGS, resources)
        self.update_pipeline = self.update_group = None

    def attach(self, projector) -> None:
        """Bind the landmark projection whose points make the next frame's ROI."""
        n = projector.num_points
        opts = self.options
        if not (0 <= opts.start_keypoint < n and 0 <= opts.end_keypoint < n):
            raise ValueError(f"rotation landmarks out of range for {n} landmarks")
        source = render_shader("postprocess_landmarks_roi.wgsl", UPDATE_BINDINGS, n=n,
                               **rect_params(opts))  # fmt: skip
        self.update_pipeline = compute_pipeline(self.ctx, source, "postprocess_landmarks_roi")
        resources = {"points": (projector.points, 0, n * 16), "lm_status": projector.status,
                     "source_roi": self.buffer, "roi": self.track}  # fmt: skip
        self.update_group = bind_group(
            self.ctx.device, self.update_pipeline, UPDATE_BINDINGS, resources
        )

    def reset(self) -> None:
        """Forget the tracked face: the next frame uses the detection."""
        self.ctx.device.queue.write_buffer(self.track, 0, np.zeros(ROI_BYTES // 4, np.float32))

    def encode_select(self, encoder) -> None:
        """Choose the ROI and copy its frame_from_tensor into the landmark pre-process."""
        dispatch(encoder, self.select_pipeline, self.select_group, (1, 1, 1))
        encoder.copy_buffer_to_buffer(self.buffer, 0, self.preprocessor.roi, 0, 32)

    def encode_update(self, encoder) -> None:
        """The next frame's ROI from this frame's landmarks (invalid without a face)."""
        if self.update_pipeline is None:
            raise RuntimeError("RoiTracker.attach(projector) first")
        dispatch(encoder, self.update_pipeline, self.update_group, (1, 1, 1))


# --- several objects (Hands, FaceMesh with max_num_faces > 1): tracked ROIs on the CPU ---
# AssociationNormRectCalculator (association_calculator.h, rectangle_util.cc) with
# min_similarity_threshold 0.5, as hand_landmark_tracking_cpu and face_landmark_front_cpu
# set it: new detections' rects first, then the previous frame's rects from landmarks.
MIN_SIMILARITY = 0.5


def rect_iou(a: Rect, b: Rect) -> float:
    """IoU of two rects' axis-aligned boxes (rotation ignored, as MediaPipe's
    CalculateIou); 0 when they do not intersect."""
    ax0, ay0 = a.x_center - a.width / 2, a.y_center - a.height / 2
    bx0, by0 = b.x_center - b.width / 2, b.y_center - b.height / 2
    iw = min(ax0 + a.width, bx0 + b.width) - max(ax0, bx0)
    ih = min(ay0 + a.height, by0 + b.height) - max(ay0, by0)
    if iw < 0 or ih < 0:
        return 0.0
    inter = iw * ih
    union = a.width * a.height + b.width * b.height - inter
    return inter / union if union > 0 else 0.0


def associate_rects(*streams: list[Rect],
                    min_similarity: float = MIN_SIMILARITY) -> list[tuple[int, Rect]]:  # fmt: skip
    """AssociationNormRectCalculator over the streams in order: each rect, after the first,
    erases every kept rect it overlaps (IoU > min_similarity) and is appended, so a later
    stream wins over an earlier one and, within a stream, the later rect wins. Returns
    (stream index, rect) pairs in the calculator's output order."""
    kept: list[tuple[int, Rect]] = []
    for index, rects in enumerate(streams):
        for rect in rects:
            kept = [(i, r) for i, r in kept if rect_iou(rect, r) <= min_similarity]
            kept.append((index, rect))
    return kept


# --- Holistic: RoiTrackingCalculator (holistic_landmark/calculators/roi_tracking_calculator.cc)
@dataclass(frozen=True)
class TrackingRequirements:
    """When a tracked ROI may stay instead of the re-crop one (hand_tracking.pbtxt's values
    by default): the rects' rotation, centre and size close enough, and every previous
    landmark inside the re-crop rect shrunk by `margin`."""

    rotation_degrees: float = 40.0
    translation: float = 0.2
    scale: float = 0.4
    margin: float = -0.1


HAND_TRACKING = TrackingRequirements()  # hand_tracking.pbtxt
FACE_TRACKING = TrackingRequirements(15.0, 0.1, 0.3, -0.2)  # face_tracking.pbtxt


def _rotated(x: float, y: float, frame_size, angle: float) -> tuple[float, float]:
    fw, fh = frame_size
    c, s = math.cos(angle), math.sin(angle)
    return x * fw * c - y * fh * s, x * fw * s + y * fh * c


def keep_tracking(prev: Rect, recrop: Rect, prev_landmarks, frame_size,
                  req: TrackingRequirements) -> bool:  # fmt: skip
    """RoiTrackingCalculator's choice: True keeps `prev` (the ROI from the last landmarks),
    False takes `recrop`. Centres and landmarks are compared in the re-crop's rotated frame."""
    fw, fh = (float(v) for v in frame_size)
    angle = -recrop.rotation
    px, py = _rotated(prev.x_center, prev.y_center, (fw, fh), angle)
    rx, ry = _rotated(recrop.x_center, recrop.y_center, (fw, fh), angle)
    diff = math.degrees(prev.rotation) - math.degrees(recrop.rotation)
    diff = diff - 360.0 if diff > 180.0 else diff + 360.0 if diff < -180.0 else diff
    rw, rh = recrop.width * fw, recrop.height * fh
    rect_ok = (abs(diff) <= req.rotation_degrees
               and abs(px - rx) <= rw * req.translation and abs(py - ry) <= rh * req.translation
               and abs(prev.width * fw - rw) <= rw * req.scale
               and abs(prev.height * fh - rh) <= rh * req.scale)  # fmt: skip
    if not rect_ok:
        return False
    half_w, half_h = rw * (1 + req.margin) / 2, rh * (1 + req.margin) / 2
    for x, y in np.asarray(prev_landmarks, np.float64)[:, :2]:
        lx, ly = _rotated(x, y, (fw, fh), angle)
        if not (rx - half_w < lx < rx + half_w and ry - half_h < ly < ry + half_h):
            return False
    return True
