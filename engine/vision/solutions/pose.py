"""Pose: MediaPipe's pose solution on the engine (33 landmarks, world landmarks, a mask).

- input: frames (see base.py); pose_detection + pose_landmark_lite / _full / _heavy
  (model_complexity 0 / 1 / 2)
- output: `PoseResult`: the landmarks (normalised, pixels), visibility, presence, world
  landmarks (metres), the segmentation mask (enable_segmentation), the ROI; MediaPipe's
  names `pose_landmarks`, `pose_world_landmarks`, `segmentation_mask`
- options: static_image_mode / running_mode, model_complexity (1), smooth_landmarks (True),
  enable_segmentation (False), smooth_segmentation (True), segmentation_smoothing (0.0,
  see 5.), min_detection_confidence (0.5), min_tracking_confidence (0.5: the pose flag),
  max_detections (16), and base.py's
- semantics: MediaPipe 0.10.14's pose_landmark_cpu graph, the detect-then-track stage
  (engine/vision/detect_track.py) for one body:
  1. without a tracked ROI (the first frame, a lost pose, stills): pose_detection on the
     frame letterboxed into 224x224 ([-1, 1], BORDER_ZERO), the best detection -> ROI
     (roi.POSE_ROI: hips' centre, side twice the distance to the body's size point, upright,
     x1.25); else the ROI from the previous frame's filtered auxiliary landmarks;
  2. the landmark model on the 256x256 crop (aspect kept, border replicated, [0, 1]); the
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
- the body part (`BodyTracker`) is Holistic's too
- GPU: on webgpu Pose's whole frame runs on the GPU (engine/vision/gpu_pose.py: the ROI,
  the decoding, the filters and the mask's warp in compute passes, one submit and one read
  a frame, nothing read on an app's `steps()` path); Holistic's body part, and Pose with
  `program = None`, decide on the CPU: numpy/OpenCV on what is read back
- usage:
    with Pose(enable_segmentation=True) as pose:
        for rgb in frames:
            res = pose.process(rgb)
            if res.landmarks is not None: print(res.landmarks_px[0], res.visibility[0])
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from engine.errors import ModelError
from engine.vision import records
from engine.vision.connections import POSE_CONNECTIONS
from engine.vision.detect_track import CropModel, DetectTrack
from engine.vision.detector import DetectorModel
from engine.vision.landmarks import (
    crop_landmarks,
    project_to_frame,
    project_world,
    refine_from_heatmap,
    remove_letterbox,
)
from engine.vision.results import Detection
from engine.vision.roi import POSE_ROI, Rect, alignment_rect, invert_affine, transform_rect
from engine.vision.smoothing import LandmarksSmoother, VisibilitySmoother, smooth_mask
from engine.vision.solutions.base import Solution, check_confidence, running_mode_of

# pose_detection_cpu.pbtxt: [-1, 1], BORDER_ZERO; pose_landmark_by_roi_cpu.pbtxt: [0, 1],
# the ROI letterboxed, replicate; model_complexity -> the landmark model
DETECTOR = DetectorModel("pose_detection", (-1.0, 1.0), "zero")
LANDMARKS = {
    c: CropModel(f"pose_landmark_{name}", (0.0, 1.0), "replicate", keep_aspect=True)
    for c, name in ((0, "lite"), (1, "full"), (2, "heavy"))
}
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


@dataclass(frozen=True)
class PoseResult:
    """One body's 33 landmarks (MediaPipe's BlazePose topology) and its mask; the
    landmark fields are None when no pose was found."""

    landmarks: np.ndarray | None  # (33, 3) normalised x / W, y / H; z on x's scale
    landmarks_px: np.ndarray | None  # (33, 3) pixels
    visibility: np.ndarray | None  # (33,) smoothed, as MediaPipe's landmark.visibility
    presence: np.ndarray | None  # (33,) presence probability (sigmoid), unsmoothed
    world_landmarks: np.ndarray | None  # (33, 3) metres, origin between the hips
    mask: np.ndarray | None  # (H, W) float32 person probability (enable_segmentation)
    roi: Rect | None  # the crop the landmark model saw
    tracked: bool  # True: the ROI came from the previous frame's landmarks
    detections: tuple[Detection, ...] | None  # None: the detector did not run
    image_size: tuple[int, int]
    timestamp_ms: int | None = None
    gpu: object = None
    backend: str = "webgpu"  # which ran the models: "webgpu" or "xnnpack"

    @property
    def pose_landmarks(self) -> np.ndarray | None:
        """MediaPipe's name: the normalised (33, 3) landmarks (visibility apart)."""
        return self.landmarks

    @property
    def pose_world_landmarks(self) -> np.ndarray | None:
        return self.world_landmarks

    @property
    def segmentation_mask(self) -> np.ndarray | None:
        return self.mask


FIELDS = {**records.FRAME, **records.POSE}


def record(res: PoseResult) -> dict:
    return records.pose(res)


def pose_outputs(graph) -> tuple[str, ...]:
    """(landmarks, flag, segmentation, heatmap, world) of a pose landmark model."""
    outs = [(graph.tensors[t].name, tuple(graph.tensors[t].shape)) for t in graph.outputs]
    sizes = [int(np.prod(s)) for _, s in outs]
    if len(outs) != 5 or sizes[0] != NUM_LANDMARKS * 5 or sizes[1] != 1 \
            or sizes[4] != NUM_LANDMARKS * 3 or outs[3][1][-1] != NUM_LANDMARKS:  # fmt: skip
        raise ModelError(f"{graph.name}: not a pose landmark model: outputs {outs}, expected "
                         f"[195], [1], mask, [.., 39] heatmap, [117]")  # fmt: skip
    return tuple(name for name, _ in outs)


def _sigmoid(x):
    """1 / (1 + e^-x) without overflow for the mask's large logits."""
    return 0.5 * (1.0 + np.tanh(0.5 * np.asarray(x, np.float64)))


def pose_roi(keypoints, size) -> Rect:
    """pose_detection_to_roi / pose_landmarks_to_roi: AlignmentPointsRects, x1.25."""
    return transform_rect(alignment_rect(keypoints, size, POSE_ROI), size, POSE_ROI)


@dataclass
class _Body:
    """One frame's decoded body, before the result."""

    landmarks: np.ndarray  # (33, 5) normalised x, y, z, visibility, presence (smoothed)
    visibility: np.ndarray
    presence: np.ndarray
    world: np.ndarray
    mask: np.ndarray | None
    rect: Rect
    tracked: bool
    next_roi: Rect | None


class BodyTracker:
    """The pose part of Pose and Holistic: one body detected, tracked, decoded, smoothed
    (see the module docstring)."""

    def __init__(self, backend, detector_model=None, landmark_model=None, *,
                 model_complexity: int, smooth_landmarks: bool, enable_segmentation: bool,
                 smooth_segmentation: bool, segmentation_smoothing: float,
                 min_detection_confidence: float, min_tracking_confidence: float,
                 max_detections: int, tracking: bool):  # fmt: skip
        if model_complexity not in LANDMARKS:
            raise ValueError(f"model_complexity must be 0, 1 or 2, not {model_complexity!r}")
        check_confidence(min_detection_confidence=min_detection_confidence,
                         min_tracking_confidence=min_tracking_confidence,
                         segmentation_smoothing=segmentation_smoothing)  # fmt: skip
        self.tracking = tracking
        self.smooth = smooth_landmarks and tracking
        self.segmentation = enable_segmentation
        self.smooth_segmentation = smooth_segmentation and tracking
        self.segmentation_ratio = float(segmentation_smoothing)
        self.min_tracking_confidence = float(min_tracking_confidence)
        crop = LANDMARKS[model_complexity]
        detector = backend.model("pose_detection", detector_model, DETECTOR.model)
        landmarks = backend.model("pose_landmark", landmark_model, crop.model)
        self.outputs = pose_outputs(landmarks.graph)
        self.stage = DetectTrack(
            backend, DETECTOR, detector, crop, landmarks, max_objects=1,
            min_score=min_detection_confidence, max_detections=max_detections,
            roi_from_detection=lambda d, size: pose_roi(d.keypoints, size),
            decode=self._decode, next_roi=lambda body: body.next_roi, tracking=tracking,
        )  # fmt: skip
        self.frame_size: tuple[int, int] | None = None
        self.new_filters()

    def new_filters(self) -> None:
        """pose_landmark_filtering.pbtxt's filters and the tracking state, all fresh."""
        self.landmark_filter = LandmarksSmoother(0.05, 80.0, 1.0)
        self.visibility_filter = VisibilitySmoother(0.1)
        self.world_filter = LandmarksSmoother(0.1, 40.0, 1.0, disable_value_scaling=True)
        self.world_visibility_filter = VisibilitySmoother(0.1)
        self.aux_filter = LandmarksSmoother(0.01, 10.0, 1.0)
        self.stage.reset()
        self._previous_mask: np.ndarray | None = None
        self._frames = 0  # MediaPipe's Python clock: frame k at k * 33333 us
        self._t_ns = 0

    def configure(self, frame_size) -> None:
        self.frame_size = frame_size
        self.stage.configure(frame_size)
        self.new_filters()  # another frame size: ROIs and filters mean nothing

    def __call__(self, frame, timestamp_ms) -> PoseResult:
        size = self.frame_size
        self._frames += 1
        self._t_ns = timestamp_ms * 1_000_000 if timestamp_ms is not None else \
            self._frames * PYTHON_FRAME_NS  # fmt: skip
        bodies, detections = self.stage.track(frame, size)
        if not bodies:
            self._lost()
            return PoseResult(None, None, None, None, None, None, None, False, detections, size,
                              timestamp_ms)  # fmt: skip
        (b,) = bodies
        fw, fh = size
        return PoseResult(
            landmarks=b.landmarks[:, :3], landmarks_px=b.landmarks[:, :3] * (fw, fh, fw),
            visibility=b.visibility, presence=b.presence, world_landmarks=b.world,
            mask=b.mask, roi=b.rect, tracked=b.tracked, detections=detections,
            image_size=size, timestamp_ms=timestamp_ms,
        )  # fmt: skip

    def _decode(self, out, padding, rect: Rect, tracked: bool) -> _Body | None:
        size, t_ns = self.frame_size, self._t_ns
        lm_name, flag_name, mask_name, heatmap_name, world_name = self.outputs
        if not float(out[flag_name].reshape(-1)[0]) > self.min_tracking_confidence:
            return None
        raw = crop_landmarks(out[lm_name], self.stage.crops.size, dims=5)
        raw[:, 3:5] = _sigmoid(raw[:, 3:5])  # visibility and presence activations
        raw = refine_from_heatmap(raw, out[heatmap_name], HEATMAP_KERNEL)
        projected = project_to_frame(remove_letterbox(raw, padding), rect)
        body, aux = projected[:NUM_BODY], projected[AUX]
        world = project_world(out[world_name].reshape(-1, 3)[:NUM_BODY], rect)
        visibility, presence = body[:, 3].copy(), body[:, 4].copy()
        raw_visibility = visibility
        if self.smooth:
            scale = self._object_scale(aux, size)
            body = self.landmark_filter(body, t_ns, size, scale)
            visibility = self.visibility_filter(raw_visibility)
            world = self.world_filter(world, t_ns)
            # the world landmarks' visibility: the same filter on the same values, so equal
            # to `visibility`; kept running as MediaPipe's graph runs it
            self.world_visibility_filter(raw_visibility)
        next_roi = None
        if self.tracking:
            aux = self.aux_filter(aux, t_ns, size, self._object_scale(aux, size))
            next_roi = pose_roi(aux[:, :2], size)
        mask = self._mask(out[mask_name], rect, size) if self.segmentation else None
        return _Body(body, visibility, presence, world, mask, rect, tracked, next_roi)

    def _lost(self) -> None:
        """No pose this frame: the next detects; the landmark and aux filters restart (their
        calculators also take IMAGE_SIZE, so they run on the empty frame and reset); the
        visibility and world filters keep their state (the landmarks are their only input:
        the empty frame never reaches them), and so does the previous mask (its loopback
        pairs the next mask with the last one). tests/vision/test_pose_loss.py."""
        self.landmark_filter.reset()
        self.aux_filter.reset()

    @staticmethod
    def _object_scale(aux: np.ndarray, size) -> float:
        """The smoothing's object scale: the unscaled alignment rect of the auxiliary
        points, (width + height) / 2 in pixels."""
        r = alignment_rect(aux[:, :2], size, POSE_ROI)
        return (r.width * size[0] + r.height * size[1]) / 2

    def _mask(self, logits, rect: Rect, size) -> np.ndarray:
        """The crop's mask warped back into the frame (WarpAffineCalculator, BORDER_ZERO),
        then smoothed with the previous frame's."""
        probability = _sigmoid(logits).astype(np.float32).reshape(logits.shape[1:3])
        mh, mw = probability.shape
        frame_from_tensor, _ = self.stage.crops.crop(rect, size)  # the padded ROI's matrix
        to_mask = np.diag([float(mw), float(mh)]) @ invert_affine(frame_from_tensor)
        fw, fh = size
        mask = cv2.warpAffine(probability, to_mask.astype(np.float64), (fw, fh),
                              flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP,
                              borderMode=cv2.BORDER_CONSTANT, borderValue=0.0)  # fmt: skip
        if self.smooth_segmentation:
            mask = smooth_mask(mask, self._previous_mask, self.segmentation_ratio)
            self._previous_mask = mask
        return mask


class Pose(Solution):
    """MediaPipe's Pose on the engine; see the module docstring."""

    def __init__(self, detector_model=None, landmark_model=None, *,
                 static_image_mode: bool | None = None, running_mode: str = "video",
                 model_complexity: int = 1, smooth_landmarks: bool = True,
                 enable_segmentation: bool = False, smooth_segmentation: bool = True,
                 min_detection_confidence: float = 0.5, min_tracking_confidence: float = 0.5,
                 segmentation_smoothing: float = SEGMENTATION_RATIO, max_detections: int = 16,
                 **options):  # fmt: skip
        if model_complexity not in LANDMARKS:
            raise ValueError(f"model_complexity must be 0, 1 or 2, not {model_complexity!r}")
        super().__init__(running_mode=running_mode_of(static_image_mode, running_mode),
                         **options)  # fmt: skip
        self.body = BodyTracker(
            self.backend, detector_model, landmark_model, model_complexity=model_complexity,
            smooth_landmarks=smooth_landmarks, enable_segmentation=enable_segmentation,
            smooth_segmentation=smooth_segmentation,
            segmentation_smoothing=segmentation_smoothing,
            min_detection_confidence=min_detection_confidence,
            min_tracking_confidence=min_tracking_confidence, max_detections=max_detections,
            tracking=self.tracking,
        )  # fmt: skip
        self.program = self.backend.gpu_stage(lambda: self._gpu_frame(model_complexity))

    @property
    def gpu(self):
        """The GPU frame's buffers on webgpu (gpu_pose.PoseFrame: points, args, tally,
        pose, mask), else None."""
        return self.program

    def _gpu_frame(self, model_complexity: int):
        from engine.vision.gpu_pose import PoseFrame

        return PoseFrame(
            self.backend, self.body.stage.detector, self.backend.engines["pose_landmark"],
            LANDMARKS[model_complexity], self.body, num_landmarks=NUM_LANDMARKS,
            num_body=NUM_BODY, heatmap_kernel=HEATMAP_KERNEL, pose_roi=POSE_ROI,
            pairs=len(POSE_CONNECTIONS), result=PoseResult,
            frame_size=lambda: self.frame_size,
        )  # fmt: skip

    @classmethod
    def models(cls, model_complexity: int = 1, **_) -> tuple[str, ...]:
        """The manifest's models these options run."""
        return (DETECTOR.model, LANDMARKS[model_complexity].model)

    def reset(self) -> None:
        """Forget the tracked pose, the filters and the last timestamp (a new video)."""
        self.body.new_filters()
        if self.program is not None:
            self.program.reset()
        self._last_ts = None

    def _configure(self, frame_size) -> None:
        self.body.configure(frame_size)
        if self.program is not None:
            self.program.configure(frame_size)

    def track(self, frame, timestamp_ms) -> PoseResult:
        return self.body(frame, timestamp_ms)
