"""Pose: MediaPipe's pose solution on the engine (33 landmarks, world landmarks, a mask).

- input: frames (see base.py); pose_detection + pose_landmark_full (model_complexity=1)
- output: `PoseResult`: the landmarks (normalised, pixels), visibility, presence, world
  landmarks (metres), the segmentation mask (enable_segmentation), the ROI; MediaPipe's
  names `pose_landmarks`, `pose_world_landmarks`, `segmentation_mask`
- options: static_image_mode / running_mode, model_complexity (1: the wheel ships the full
  model only; 0 and 2 take `landmark_model=` a lite or heavy file), smooth_landmarks (True),
  enable_segmentation (False), smooth_segmentation (True), segmentation_smoothing (0.0,
  see 5.), min_detection_confidence (0.5),
  min_tracking_confidence (0.5: the pose flag), and base.py's
- semantics: MediaPipe 0.10.14's pose_landmark_cpu graph:
  1. without a tracked ROI (the first frame, a lost pose, stills): pose_detection on the
     frame letterboxed into 224x224 ([-1, 1], BORDER_ZERO), the best detection -> ROI
     (roi.POSE_ROI: hips' centre, side twice the distance to the body's size point, upright,
     x1.25); else the ROI from the previous frame's filtered auxiliary landmarks;
  2. pose_landmark_full on the 256x256 crop (aspect kept, border replicated, [0, 1]); the
     pose is kept when its flag > min_tracking_confidence;
  3. 39 landmarks (x, y, z / 256, sigmoid visibility and presence) refined on the heatmap
     (9x9 cells: what MediaPipe's binary does), 0-32 the body, 33-34 the auxiliary points;
     world landmarks take their visibility and presence; projected back (letterbox
     removed, rotated, z * ROI width);
  4. smoothing (engine/vision/smoothing.py, the graph's parameters): landmarks one-euro
     (min_cutoff 0.05, beta 80, in pixels scaled by the body's size, reset when the pose is
     lost), visibility low-pass (0.1), world one-euro (0.1, 40, unscaled, kept across a
     loss), auxiliary points one-euro (0.01, 10) always, for the next ROI;
  5. the mask: sigmoid of the model's logits warped back to the frame (bilinear, zero
     outside the crop), mixed with the previous frame's where uncertain by
     `segmentation_smoothing` (0.0: what MediaPipe 0.10.14 does, although its graph asks
     for 0.7, which the option gives)
- time: the filters run on `timestamp_ms` when given, else on MediaPipe's Python clock
  (33333 us a frame), so `process(frame)` matches `mp.solutions.pose` frame for frame
- GPU: pre-processing, both models and the SSD decode run on the GPU; the ROI, the
  decoding, the filters and the mask's warp are numpy/OpenCV on what is read back
- usage:
    with Pose(enable_segmentation=True) as pose:
        for rgb in frames:
            res = pose.process(rgb)
            if res.landmarks is not None: print(res.landmarks_px[0], res.visibility[0])
"""

from __future__ import annotations

import cv2
import numpy as np

from engine.errors import ModelError
from engine.vision.landmarks import (
    crop_landmarks,
    project_to_frame,
    project_world,
    refine_from_heatmap,
    remove_letterbox,
)
from engine.vision.roi import POSE_ROI, Rect, alignment_rect, invert_affine, transform_rect
from engine.vision.smoothing import LandmarksSmoother, VisibilitySmoother, smooth_mask
from engine.vision.solutions.base import Solution
from engine.vision.solutions.face_detector import detector_spec, detector_stages
from engine.vision.solutions.results import PoseResult

DETECTOR_MODEL = "pose_detection"
LANDMARK_MODELS = {1: "pose_landmark_full"}  # lite (0) and heavy (2) are not in the wheel
DETECTOR_RANGE, DETECTOR_BORDER = (-1.0, 1.0), "zero"  # pose_detection_cpu.pbtxt
LANDMARK_RANGE, LANDMARK_BORDER = (0.0, 1.0), "replicate"  # pose_landmark_by_roi_cpu
NUM_LANDMARKS, NUM_BODY, AUX = 39, 33, slice(33, 35)
# RefineLandmarksFromHeatmapCalculator's window: the graph sets kernel_size 7, but MediaPipe
# 0.10.14's wheel refines as with 9, its proto's default (fitted on its outputs: a 9-cell
# window reproduces every refined landmark of a still to 0.01 cells, 7 misses by 0.77)
HEATMAP_KERNEL = 9
# SegmentationSmoothingCalculator's combine_with_previous_ratio: the graph sets 0.7, but
# MediaPipe 0.10.14's wheel mixes nothing, its proto's default 0.0 (measured on its masks:
# unmixed masks match them at IoU 0.9992-0.9994 from the second frame on, 0.7-mixed ones
# at 0.984-0.990); `segmentation_smoothing` sets another ratio
SEGMENTATION_RATIO = 0.0
PYTHON_FRAME_NS = 33_333_000  # solution_base.py: each process() adds 33333 us


def pose_outputs(engine) -> tuple[str, ...]:
    """(landmarks, flag, segmentation, heatmap, world) of a pose landmark model."""
    g = engine.graph
    outs = [(g.tensors[t].name, tuple(g.tensors[t].shape)) for t in g.outputs]
    sizes = [int(np.prod(s)) for _, s in outs]
    if len(outs) != 5 or sizes[0] != NUM_LANDMARKS * 5 or sizes[1] != 1 \
            or sizes[4] != NUM_LANDMARKS * 3 or outs[3][1][-1] != NUM_LANDMARKS:  # fmt: skip
        raise ModelError(f"{g.name}: not a pose landmark model: outputs {outs}, expected "
                         f"[195], [1], mask, [.., 39] heatmap, [117]")  # fmt: skip
    return tuple(name for name, _ in outs)


def _sigmoid(x):
    """1 / (1 + e^-x) without overflow for the mask's large logits."""
    return 0.5 * (1.0 + np.tanh(0.5 * np.asarray(x, np.float64)))


class Pose(Solution):
    """MediaPipe's Pose on the engine; see the module docstring."""

    def __init__(self, detector_model=None, landmark_model=None, *,
                 static_image_mode: bool | None = None, running_mode: str = "video",
                 model_complexity: int = 1, smooth_landmarks: bool = True,
                 enable_segmentation: bool = False, smooth_segmentation: bool = True,
                 min_detection_confidence: float = 0.5, min_tracking_confidence: float = 0.5,
                 segmentation_smoothing: float = SEGMENTATION_RATIO, max_detections: int = 16,
                 **options):  # fmt: skip
        if model_complexity not in (0, 1, 2):
            raise ValueError(f"model_complexity must be 0, 1 or 2, not {model_complexity!r}")
        if model_complexity not in LANDMARK_MODELS and landmark_model is None:
            raise ValueError(
                f"model_complexity={model_complexity}: MediaPipe 0.10.14's wheel ships "
                f"pose_landmark_full only; pass landmark_model= a pose_landmark_"
                f"{'lite' if model_complexity == 0 else 'heavy'}.tflite file"
            )
        if static_image_mode is not None:
            running_mode = "image" if static_image_mode else "video"
        super().__init__(running_mode=running_mode, **options)
        self.tracking = self.running_mode == "video"
        self.smooth = smooth_landmarks and self.tracking
        self.segmentation = enable_segmentation
        self.smooth_segmentation = smooth_segmentation and self.tracking
        if not 0.0 <= segmentation_smoothing <= 1.0:
            raise ValueError(
                f"segmentation_smoothing must be in [0, 1], not {segmentation_smoothing}"
            )
        self.segmentation_ratio = float(segmentation_smoothing)
        self.min_tracking_confidence = float(min_tracking_confidence)
        detector = self._engine("pose_detection", detector_model, DETECTOR_MODEL)
        spec = detector_spec(detector_model or DETECTOR_MODEL + ".tflite", detector,
                             min_detection_confidence)  # fmt: skip
        self.detector = detector_stages(self, detector, spec, max_detections, DETECTOR_RANGE,
                                       DETECTOR_BORDER)  # fmt: skip
        self.detector.add_readback(self.readback)
        model = LANDMARK_MODELS.get(model_complexity, LANDMARK_MODELS[1])
        landmarks = self._engine("pose_landmark", landmark_model, model)
        self.outputs = pose_outputs(landmarks)
        self.crops = self._roi_model(landmarks, LANDMARK_RANGE, LANDMARK_BORDER, keep_aspect=True)
        self._new_filters()

    def _new_filters(self) -> None:
        """pose_landmark_filtering.pbtxt's filters and the tracking state, all fresh."""
        self.landmark_filter = LandmarksSmoother(0.05, 80.0, 1.0)
        self.visibility_filter = VisibilitySmoother(0.1)
        self.world_filter = LandmarksSmoother(0.1, 40.0, 1.0, disable_value_scaling=True)
        self.world_visibility_filter = VisibilitySmoother(0.1)
        self.aux_filter = LandmarksSmoother(0.01, 10.0, 1.0)
        self._tracked: Rect | None = None
        self._previous_mask: np.ndarray | None = None
        self._frames = 0  # MediaPipe's Python clock: frame k at k * 33333 us

    def reset(self) -> None:
        """Forget the tracked pose, the filters and the last timestamp (a new video)."""
        self._new_filters()
        self._last_ts = None

    def _configure(self, frame_size) -> None:
        self.detector.configure(frame_size)
        self._new_filters()  # another frame size: ROIs and filters mean nothing

    def _process(self, frame, timestamp_ms) -> PoseResult:
        view, size = self.frames(frame)
        self.prepare(size)
        self._frames += 1
        t_ns = timestamp_ms * 1_000_000 if timestamp_ms is not None else \
            self._frames * PYTHON_FRAME_NS  # fmt: skip
        rect, detections = (self._tracked if self.tracking else None), None
        if rect is None:
            detections = self._detect(view)
            if detections:
                d = detections[0]  # SplitDetectionVector: the best detection only
                rect = transform_rect(alignment_rect(d.keypoints, size, POSE_ROI), size,
                                      POSE_ROI)  # fmt: skip
        tracked = rect is not None and detections is None
        empty = PoseResult(None, None, None, None, None, None, None, False, detections, size,
                           timestamp_ms)  # fmt: skip
        if rect is None:
            return self._lost(empty)
        (out, padding), = self.crops.run(view, size, [rect])  # fmt: skip
        lm_name, flag_name, mask_name, heatmap_name, world_name = self.outputs
        if not float(out[flag_name].reshape(-1)[0]) > self.min_tracking_confidence:
            return self._lost(empty)
        raw = crop_landmarks(out[lm_name], self.crops.size, dims=5)
        raw[:, 3:5] = _sigmoid(raw[:, 3:5])  # visibility and presence activations
        raw = refine_from_heatmap(raw, out[heatmap_name], HEATMAP_KERNEL)
        projected = project_to_frame(remove_letterbox(raw, padding), rect)
        body, aux = projected[:NUM_BODY], projected[AUX]
        world = project_world(out[world_name].reshape(-1, 3)[:NUM_BODY], rect)
        visibility, presence = body[:, 3].copy(), body[:, 4].copy()
        world_visibility = visibility
        if self.smooth:
            scale = self._object_scale(aux, size)
            body = self.landmark_filter(body, t_ns, size, scale)
            visibility = self.visibility_filter(visibility)
            world = self.world_filter(world, t_ns)
            world_visibility = self.world_visibility_filter(world_visibility)
        if self.tracking:
            aux = self.aux_filter(aux, t_ns, size, self._object_scale(aux, size))
            self._tracked = transform_rect(alignment_rect(aux[:, :2], size, POSE_ROI), size,
                                           POSE_ROI)  # fmt: skip
        del world_visibility  # equal to `visibility`: the same filter on the same values
        fw, fh = size
        mask = self._mask(out[mask_name], rect, padding, size) if self.segmentation else None
        return PoseResult(
            landmarks=body[:, :3], landmarks_px=body[:, :3] * (fw, fh, fw),
            visibility=visibility, presence=presence, world_landmarks=world, mask=mask,
            roi=rect, tracked=tracked, detections=detections, image_size=size,
            timestamp_ms=timestamp_ms,
        )  # fmt: skip

    def _lost(self, empty: PoseResult) -> PoseResult:
        """No pose this frame: the next detects; the landmark and aux filters restart (their
        calculators also take IMAGE_SIZE, so they run on the empty frame and reset); the
        visibility and world filters keep their state (the landmarks are their only input:
        the empty frame never reaches them), and so does the previous mask (its loopback
        pairs the next mask with the last one). tests/vision/test_pose_loss.py."""
        self._tracked = None
        self.landmark_filter.reset()
        self.aux_filter.reset()
        return empty

    @staticmethod
    def _object_scale(aux: np.ndarray, size) -> float:
        """The smoothing's object scale: the unscaled alignment rect of the auxiliary
        points, (width + height) / 2 in pixels."""
        r = alignment_rect(aux[:, :2], size, POSE_ROI)
        return (r.width * size[0] + r.height * size[1]) / 2

    def _detect(self, view):
        return self.detector.detect(view, self.readback)

    def _mask(self, logits, rect: Rect, padding, size) -> np.ndarray:
        """The crop's mask warped back into the frame (WarpAffineCalculator, BORDER_ZERO),
        then smoothed with the previous frame's."""
        probability = _sigmoid(logits).astype(np.float32).reshape(logits.shape[1:3])
        mh, mw = probability.shape
        frame_from_tensor, _ = self.crops.crop(rect, size)  # the padded ROI's matrix
        to_mask = np.diag([float(mw), float(mh)]) @ invert_affine(frame_from_tensor)
        fw, fh = size
        mask = cv2.warpAffine(probability, to_mask.astype(np.float64), (fw, fh),
                              flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP,
                              borderMode=cv2.BORDER_CONSTANT, borderValue=0.0)  # fmt: skip
        if self.smooth_segmentation:
            mask = smooth_mask(mask, self._previous_mask, self.segmentation_ratio)
            self._previous_mask = mask
        return mask

    def steps(self, frame_view):
        raise NotImplementedError("Pose decides its ROI on the CPU between submits; use process()")

    def _owned_buffers(self) -> list:
        return [*self.detector.owned_buffers(), *self.crops.owned_buffers()]

    @property
    def readback_maps(self) -> int:
        return self.readback.maps + self.crops.readback.maps

    def close(self) -> None:
        if not self._closed:
            self.crops.destroy()
        super().close()
