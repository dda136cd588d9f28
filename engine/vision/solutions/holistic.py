"""Holistic: MediaPipe's holistic solution on the engine (pose, both hands, the face).

- input: frames (see base.py); pose_detection, pose_landmark_full, hand_recrop,
  hand_landmark_full, face_detection_short_range, face_landmark (face_landmark_with_attention
  with refine_face_landmarks) (the manifest's)
- output: `HolisticResult`: the pose as Pose gives it (landmarks, visibility, world
  landmarks, mask), `left_hand_landmarks` / `right_hand_landmarks` (21, 3) and
  `face_landmarks` (468, 3) or (478, 3) refined, normalised, each None when absent
  (MediaPipe's names)
- options: Pose's (static_image_mode, model_complexity, smooth_landmarks,
  enable_segmentation, smooth_segmentation, min_detection_confidence,
  min_tracking_confidence: the pose's only, as MediaPipe), refine_face_landmarks (False;
  True: the attention model's 478 landmarks, engine/vision/face_refinement.py; on webgpu
  only, every model of the solution: backend "auto" picks webgpu for it whatever the
  adapter, "xnnpack" is a ModelError, LiteRT having no kernel for its custom ops), and
  base.py's
- semantics: MediaPipe 0.10.14's holistic_landmark_cpu graph:
  1. the pose: engine/vision/solutions/pose.py, smoothing and mask included;
  2. each hand (left: pose landmarks 15, 17, 19, the subject's left; right: 16, 18, 20)
     when its wrist's smoothed visibility > 0.1: a ROI from the pose
     (roi.hand_rect_from_pose, x2.7), refined by hand_recrop (its two points -> an upright
     ROI, roi.HAND_RECROP_ROI); the previous frame's hand ROI is kept instead while it
     passes RoiTrackingCalculator's checks (tracking.keep_tracking, HAND_TRACKING);
     hand_landmark_full on it, kept when its flag > 0.5;
  3. the face: a ROI from the pose's face points (x3), face detection inside it, the best
     detection's keypoints -> the face ROI (x2, shifted up), kept from the previous
     frame's landmarks (all 468 or 478) under FACE_TRACKING's checks; face_landmark (or
     face_landmark_with_attention) on it, flag > 0.5
  No smoothing of hands or face (the graph has none); the hand and face tracking runs in
  static_image_mode too, as MediaPipe's does.
- GPU: every model and pre-process on the GPU; ROIs and decisions on the CPU from what is
  read back (the pose's submits, then one for both re-crops, one for the face detector,
  one for the hands and the face)
- usage:
    with Holistic() as holistic:
        res = holistic.process(rgb)
        if res.right_hand_landmarks is not None: print(res.right_hand_landmarks[8])
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from engine.vision.backend import webgpu_only
from engine.vision.face_refinement import check_outputs, refine_face_landmarks
from engine.vision.landmarks import crop_landmarks, project_to_frame, remove_letterbox
from engine.vision.roi import (
    FACE_FROM_DETECTION_ROI,
    FACE_FROM_POSE_ROI,
    HAND_FROM_POSE_ROI,
    HAND_LANDMARKS_ROI,
    HAND_RECROP_ROI,
    Rect,
    alignment_rect,
    detection_rect,
    hand_rect_from_landmarks,
    hand_rect_from_pose,
    landmarks_box,
    rect_matrix,
    transform_rect,
)
from engine.vision.solutions.base import Solution
from engine.vision.solutions.face_detector import detector_spec, detector_stages
from engine.vision.solutions.face_mesh import LANDMARK_MODELS as FACE_MODELS
from engine.vision.solutions.hands import LANDMARK_MODELS as HAND_MODELS
from engine.vision.solutions.hands import decode_hand, hand_outputs
from engine.vision.solutions.pose import Pose
from engine.vision.solutions.results import PoseResult
from engine.vision.tracking import FACE_TRACKING, HAND_TRACKING, LANDMARKS_ROI, keep_tracking

RECROP_MODEL, FACE_DETECTOR = "hand_recrop", "face_detection_short_range"
HAND_SIDES = {"left": (15, 17, 19), "right": (16, 18, 20)}  # wrist, pinky, index
HAND_VISIBILITY = 0.1  # hand_visibility_from_hand_landmarks_from_pose.pbtxt
PRESENCE = 0.5  # the hand and face flags' thresholds (not min_tracking_confidence)
FACE_POINTS = slice(0, 11)  # the pose's face landmarks


@dataclass(frozen=True)
class HolisticResult:
    pose: PoseResult
    left_hand_landmarks: np.ndarray | None  # (21, 3) normalised: the subject's left hand
    right_hand_landmarks: np.ndarray | None
    face_landmarks: np.ndarray | None  # (468, 3) normalised; (478, 3) refined
    rois: dict  # the crops each part's model saw: "left", "right", "face" -> Rect
    image_size: tuple[int, int]
    timestamp_ms: int | None = None
    backend: str = "webgpu"  # which ran the models: "webgpu" or "xnnpack"

    @property
    def pose_landmarks(self) -> np.ndarray | None:
        return self.pose.landmarks

    @property
    def pose_world_landmarks(self) -> np.ndarray | None:
        return self.pose.world_landmarks

    @property
    def segmentation_mask(self) -> np.ndarray | None:
        return self.pose.mask


def face_landmark_outputs(engine) -> tuple[str, str]:
    """(landmarks, flag) of face_landmark (or the attention model): the 1404-value output
    and the 1-value one."""
    g = engine.graph
    outs = {g.tensors[t].name: int(np.prod(g.tensors[t].shape)) for t in g.outputs}
    return next(n for n, s in outs.items() if s == 1404), next(n for n, s in outs.items() if s == 1)


class Holistic(Solution):
    """MediaPipe's Holistic on the engine; see the module docstring."""

    def __init__(self, *, static_image_mode: bool | None = None, running_mode: str = "video",
                 model_complexity: int = 1, smooth_landmarks: bool = True,
                 enable_segmentation: bool = False, smooth_segmentation: bool = True,
                 refine_face_landmarks: bool = False, min_detection_confidence: float = 0.5,
                 min_tracking_confidence: float = 0.5, pose_landmark_model=None,
                 **options):  # fmt: skip
        if refine_face_landmarks:  # its face model's custom ops run on webgpu only
            options["backend"] = webgpu_only(options.get("backend", "auto"),
                                             "refine_face_landmarks")  # fmt: skip
        if static_image_mode is not None:
            running_mode = "image" if static_image_mode else "video"
        super().__init__(running_mode=running_mode, **options)
        engine_options = {k: v for k, v in options.items() if k not in ("bgr", "output")}
        self.pose = Pose(
            landmark_model=pose_landmark_model, running_mode=running_mode,
            model_complexity=model_complexity, smooth_landmarks=smooth_landmarks,
            enable_segmentation=enable_segmentation, smooth_segmentation=smooth_segmentation,
            min_detection_confidence=min_detection_confidence,
            min_tracking_confidence=min_tracking_confidence, context=self.ctx,
            backend=self.backend, num_threads=self.num_threads,
            **{k: v for k, v in engine_options.items()
               if k not in ("context", "adapter", "backend", "num_threads")},
        )  # fmt: skip
        recrop = self._engine("hand_recrop", None, RECROP_MODEL)
        hand = self._engine("hand_landmark", None, HAND_MODELS[1])  # always the full model
        face_detector = self._engine("face_detection", None, FACE_DETECTOR)
        self.refine = bool(refine_face_landmarks)
        face = self._engine("face_landmark", None, FACE_MODELS[self.refine])
        self.recrops = self._roi_model(recrop, (0.0, 1.0), "replicate", keep_aspect=True)
        self.hands = self._roi_model(hand, (0.0, 1.0), "replicate", keep_aspect=True)
        self.hand_names = hand_outputs(hand)
        spec = detector_spec(FACE_DETECTOR + ".tflite", face_detector, 0.5)
        self.face_detector = detector_stages(self, face_detector, spec)
        self.face_detector.add_readback(self.readback)
        self.faces = self._roi_model(face, (0.0, 1.0), "replicate", keep_aspect=False)
        self.face_names = face_landmark_outputs(face)
        if self.refine:
            check_outputs([math.prod(o.shape) for o in self.faces.outputs])
        self._previous: dict[str, np.ndarray] = {}  # part -> last frame's landmarks

    def reset(self) -> None:
        """Forget every tracked part, the pose's filters and the last timestamp."""
        self.pose.reset()
        self._previous = {}
        self._last_ts = None

    def _configure(self, frame_size) -> None:
        self._previous = {}

    def _process(self, frame, timestamp_ms) -> HolisticResult:
        view, size = self.frames(frame)
        self.prepare(size)
        pose = self.pose.process(view, timestamp_ms)
        rois: dict[str, Rect] = {}
        if pose.landmarks is not None:
            rois.update(self._hand_rois(view, size, pose))
            face_roi = self._face_roi(view, size, pose)
            if face_roi is not None:
                rois["face"] = face_roi
        found = self._landmarks(view, size, rois)
        self._previous = found
        return HolisticResult(pose, found.get("left"), found.get("right"), found.get("face"),
                              rois, size, timestamp_ms)  # fmt: skip

    # --- hands ---------------------------------------------------------------------------
    def _hand_rois(self, view, size, pose: PoseResult) -> dict[str, Rect]:
        """Each visible hand's ROI: re-cropped from the pose's, or the tracked one."""
        lm = pose.landmarks[:, :2]
        from_pose = {}
        for side, (wrist, pinky, index) in HAND_SIDES.items():
            if pose.visibility[wrist] > HAND_VISIBILITY:
                rect = hand_rect_from_pose(lm[wrist], lm[pinky], lm[index], size)
                from_pose[side] = transform_rect(rect, size, HAND_FROM_POSE_ROI)
        outputs = self.recrops.run(view, size, list(from_pose.values()))
        rois = {}
        for (side, rect), (out, padding) in zip(from_pose.items(), outputs, strict=True):
            points = crop_landmarks(next(iter(out.values())), self.recrops.size, dims=2)
            points = project_to_frame(remove_letterbox(points, padding), rect)
            recrop = transform_rect(alignment_rect(points, size, HAND_RECROP_ROI), size,
                                    HAND_RECROP_ROI)  # fmt: skip
            rois[side] = self._tracked_or(side, recrop, size, self._hand_roi, HAND_TRACKING)
        return rois

    @staticmethod
    def _hand_roi(landmarks, size) -> Rect:
        return transform_rect(hand_rect_from_landmarks(landmarks, size), size, HAND_LANDMARKS_ROI)

    # --- face ------------------------------------------------------------------------------
    def _face_roi(self, view, size, pose: PoseResult) -> Rect | None:
        """Face detection inside the pose's face region, its best detection -> the ROI."""
        points = pose.landmarks[FACE_POINTS, :2]
        rect = transform_rect(detection_rect(landmarks_box(points), points, size,
                                             FACE_FROM_POSE_ROI), size, FACE_FROM_POSE_ROI)  # fmt: skip
        m = self._padded_matrix(rect, size, self.face_detector.spec.input_size)
        self.face_detector.set_transform(m, size)
        detections = self.face_detector.detect(view, self.readback)
        if not detections:
            return None
        kps = detections[0].keypoints  # USE_KEYPOINTS: the box of the keypoints
        box = (*kps.min(axis=0), *kps.max(axis=0))
        recrop = transform_rect(detection_rect(box, kps, size, FACE_FROM_DETECTION_ROI), size,
                                FACE_FROM_DETECTION_ROI)  # fmt: skip
        return self._tracked_or("face", recrop, size, self._face_roi_from_landmarks,
                                FACE_TRACKING)  # fmt: skip

    @staticmethod
    def _face_roi_from_landmarks(landmarks, size) -> Rect:
        # face_landmarks_to_roi.pbtxt: every landmark's box, eye corners 33 -> 263, x1.5
        rect = detection_rect(landmarks_box(landmarks), landmarks[:, :2], size, LANDMARKS_ROI)
        return transform_rect(rect, size, LANDMARKS_ROI)

    @staticmethod
    def _padded_matrix(rect: Rect, size, tensor_size) -> np.ndarray:
        """frame_from_tensor of `rect` fitted to the tensor's aspect (keep_aspect_ratio)."""
        from engine.vision.image_to_tensor import pad_roi

        fw, fh = size
        pw, ph = pad_roi(rect.width * fw, rect.height * fh, tensor_size)
        return rect_matrix(Rect(rect.x_center, rect.y_center, pw / fw, ph / fh, rect.rotation),
                           size)  # fmt: skip

    # --- tracking and the landmark models ------------------------------------------------
    def _tracked_or(self, part: str, recrop: Rect, size, roi_from, req) -> Rect:
        """RoiTrackingCalculator: the previous frame's ROI when it passes, else `recrop`."""
        previous = self._previous.get(part)
        if previous is None:
            return recrop
        prev = roi_from(previous, size)
        return prev if keep_tracking(prev, recrop, previous, size, req) else recrop

    def _landmarks(self, view, size, rois: dict[str, Rect]) -> dict[str, np.ndarray]:
        found = {}
        hand_parts = [p for p in ("left", "right") if p in rois]
        for part, (out, padding) in zip(
            hand_parts, self.hands.run(view, size, [rois[p] for p in hand_parts]), strict=True
        ):
            decoded = decode_hand(out, padding, rois[part], self.hand_names, self.hands.size,
                                  PRESENCE)  # fmt: skip
            if decoded is not None:
                found[part] = decoded[0]
        if "face" in rois:
            ((out, _),) = self.faces.run(view, size, [rois["face"]])
            lm_name, flag_name = self.face_names
            flag = 1.0 / (1.0 + math.exp(-float(out[flag_name].reshape(-1)[0])))
            if flag > PRESENCE:
                if self.refine:
                    lm = refine_face_landmarks([out[o.name] for o in self.faces.outputs])
                else:
                    lm = crop_landmarks(out[lm_name], self.faces.size)
                found["face"] = project_to_frame(lm, rois["face"])
        return found

    def steps(self, frame_view):
        raise NotImplementedError("Holistic decides its ROIs on the CPU; use process()")

    @property
    def readback_maps(self) -> int:
        return (self.readback.maps + self.pose.readback_maps + self.recrops.readback.maps
                + self.hands.readback.maps + self.faces.readback.maps)  # fmt: skip

    def _owned_buffers(self) -> list:
        return [*self.face_detector.owned_buffers(), *self.recrops.owned_buffers(),
                *self.hands.owned_buffers(), *self.faces.owned_buffers()]  # fmt: skip

    def close(self) -> None:
        if not self._closed:
            for crops in (self.recrops, self.hands, self.faces):
                crops.destroy()
            self.pose.close()
        super().close()
