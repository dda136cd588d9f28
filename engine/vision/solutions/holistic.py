"""Holistic: MediaPipe's holistic solution on the engine (pose, both hands, the face).

- input: frames (see base.py); pose_detection, a pose landmark model (model_complexity),
  hand_recrop, hand_landmark_full, face_detection_short_range, face_landmark
  (face_landmark_with_attention with refine_face_landmarks) (the manifest's)
- output: `HolisticResult`: the pose as Pose gives it (landmarks, visibility, world
  landmarks, mask), `left_hand_landmarks` / `right_hand_landmarks` (21, 3) and
  `face_landmarks` (468, 3) or (478, 3) refined, normalised, each None when absent
  (MediaPipe's names)
- options: Pose's (static_image_mode, model_complexity, smooth_landmarks,
  enable_segmentation, smooth_segmentation, min_detection_confidence,
  min_tracking_confidence: the pose's only, as MediaPipe), refine_face_landmarks (False;
  True: the attention model's 478 landmarks, on either backend),
  pose_landmark_model (a file instead of the manifest's), and base.py's
- semantics: MediaPipe 0.10.14's holistic_landmark_cpu graph, composed of the others'
  declarations:
  1. the pose: Pose's body part (pose.BodyTracker), smoothing and mask included;
  2. each hand (left: pose landmarks 15, 17, 19, the subject's left; right: 16, 18, 20)
     when its wrist's smoothed visibility > 0.1: a ROI from the pose
     (roi.hand_rect_from_pose, x2.7), refined by hand_recrop (its two points -> an upright
     ROI, roi.HAND_RECROP_ROI); the previous frame's hand ROI is kept instead while it
     passes RoiTrackingCalculator's checks (tracking.keep_tracking, HAND_TRACKING);
     Hands' full landmark model on it (hands.LANDMARKS[1], hands.decode_hand), kept when
     its flag > 0.5;
  3. the face: a ROI from the pose's face points (x3), FaceMesh's detector inside it, the
     best detection's keypoints -> the face ROI (x2, shifted up), kept from the previous
     frame's landmarks (all 468 or 478) under FACE_TRACKING's checks; FaceMesh's landmark
     model on it (face_mesh.LANDMARKS, face_mesh.face_landmarks), flag > 0.5
  No smoothing of hands or face (the graph has none); the hand and face tracking runs in
  static_image_mode too, as MediaPipe's does.
- GPU: on webgpu the whole frame runs on the GPU (engine/vision/gpu_holistic.py: Pose's
  GPU frame, then the crops, the tracking checks and the decoding in compute passes, one
  submit and one read a frame, nothing read on an app's `steps()` path); with
  refine_face_landmarks, on xnnpack and with `program = None`, the CPU-decided path: ROIs
  and decisions on the CPU from what is read back (the pose's submits, then one for both
  re-crops, one for the face detector, one for the hands and the face)
- usage:
    with Holistic() as holistic:
        res = holistic.process(rgb)
        if res.right_hand_landmarks is not None: print(res.right_hand_landmarks[8])
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from engine.vision import records
from engine.vision.connections import FACEMESH_CONTOURS, HAND_CONNECTIONS, POSE_CONNECTIONS
from engine.vision.detect_track import CropModel
from engine.vision.detector import ssd_spec
from engine.vision.face_refinement import check_outputs
from engine.vision.image_to_tensor import pad_roi
from engine.vision.landmarks import crop_landmarks, project_to_frame, remove_letterbox
from engine.vision.roi import (
    FACE_FROM_DETECTION_ROI,
    FACE_FROM_POSE_ROI,
    HAND_FROM_POSE_ROI,
    HAND_RECROP_ROI,
    Rect,
    alignment_rect,
    detection_rect,
    hand_rect_from_pose,
    landmarks_box,
    rect_matrix,
    transform_rect,
)
from engine.vision.solutions import face_mesh, hands
from engine.vision.solutions.base import Solution, running_mode_of
from engine.vision.solutions.pose import (
    HEATMAP_KERNEL,
    LANDMARKS,
    NUM_BODY,
    NUM_LANDMARKS,
    POSE_ROI,
    SEGMENTATION_RATIO,
    BodyTracker,
    Pose,
    PoseResult,
)
from engine.vision.tracking import FACE_TRACKING, HAND_TRACKING, LANDMARKS_ROI, keep_tracking

# hand_recrop_by_roi_cpu.pbtxt: [0, 1], the ROI letterboxed, replicate
RECROP = CropModel("hand_recrop", (0.0, 1.0), "replicate", keep_aspect=True)
HAND = hands.LANDMARKS[1]  # holistic_landmark_cpu: always the full hand model
HAND_SIDES = {"left": (15, 17, 19), "right": (16, 18, 20)}  # wrist, pinky, index
HAND_VISIBILITY = 0.1  # hand_visibility_from_hand_landmarks_from_pose.pbtxt
PRESENCE = 0.5  # the hand and face flags' thresholds (not min_tracking_confidence)
FACE_POINTS = slice(0, 11)  # the pose's face landmarks
FACE_DETECTIONS = 16  # the face detector's candidates after NMS


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


PARTS = {"left_hand_landmarks_px": (records.F32, 21, 3),
         "right_hand_landmarks_px": (records.F32, 21, 3),
         "face_landmarks_px": (records.F32, None, 3)}  # fmt: skip
FIELDS = {**records.FRAME, **records.POSE, **PARTS}


def record(res: HolisticResult) -> dict:
    size = res.image_size
    return {**records.pose(res.pose),
            "left_hand_landmarks_px": records.pixels(res.left_hand_landmarks, size),
            "right_hand_landmarks_px": records.pixels(res.right_hand_landmarks, size),
            "face_landmarks_px": records.pixels(res.face_landmarks, size)}  # fmt: skip


class Holistic(Solution):
    """MediaPipe's Holistic on the engine; see the module docstring."""

    def __init__(self, *, static_image_mode: bool | None = None, running_mode: str = "video",
                 model_complexity: int = 1, smooth_landmarks: bool = True,
                 enable_segmentation: bool = False, smooth_segmentation: bool = True,
                 refine_face_landmarks: bool = False, min_detection_confidence: float = 0.5,
                 min_tracking_confidence: float = 0.5, pose_landmark_model=None,
                 **options):  # fmt: skip
        super().__init__(running_mode=running_mode_of(static_image_mode, running_mode),
                         **options)  # fmt: skip
        b = self.backend
        self.body = BodyTracker(
            b, None, pose_landmark_model, model_complexity=model_complexity,
            smooth_landmarks=smooth_landmarks, enable_segmentation=enable_segmentation,
            smooth_segmentation=smooth_segmentation, segmentation_smoothing=SEGMENTATION_RATIO,
            min_detection_confidence=min_detection_confidence,
            min_tracking_confidence=min_tracking_confidence, max_detections=16,
            tracking=self.tracking,
        )  # fmt: skip
        self.refine = bool(refine_face_landmarks)
        recrop = b.model("hand_recrop", None, RECROP.model)
        hand = b.model("hand_landmark", None, HAND.model)
        face_detector = b.model("face_detection", None, face_mesh.DETECTOR.model)
        face = self.face_model = b.model("face_landmark", None,
                                         face_mesh.LANDMARKS[self.refine].model)  # fmt: skip
        self.recrops = b.crops(recrop, RECROP.value_range, RECROP.border, RECROP.keep_aspect)
        self.hands = b.crops(hand, HAND.value_range, HAND.border, HAND.keep_aspect)
        self.hand_names = hands.hand_outputs(hand.graph)
        d = face_mesh.DETECTOR
        self.face_detector = b.detector(face_detector, ssd_spec(face_detector.graph, PRESENCE),
                                        FACE_DETECTIONS, d.value_range, d.border)  # fmt: skip
        crop = face_mesh.LANDMARKS[self.refine]
        self.faces = b.crops(face, crop.value_range, crop.border, crop.keep_aspect)
        if self.refine:
            check_outputs([math.prod(face.graph.tensors[t].shape) for t in face.graph.outputs])
        self._previous: dict[str, np.ndarray] = {}  # part -> last frame's landmarks
        # the attention model's seven outputs are decoded on the CPU-decided path only
        self.program = None if self.refine else \
            b.gpu_stage(lambda: self._gpu_frame(model_complexity))  # fmt: skip

    @property
    def gpu(self):
        """The GPU frame's buffers on webgpu (gpu_holistic.HolisticFrame: points, labels,
        hand_args, face_args, tally, and the pose's in `.pose`), else None."""
        return self.program

    def _gpu_frame(self, model_complexity: int):
        from engine.vision.gpu_holistic import HolisticFrame
        from engine.vision.gpu_pose import PoseFrame

        b, frame_size = self.backend, lambda: self.frame_size
        pose = PoseFrame(
            b, self.body.stage.detector, b.engines["pose_landmark"], LANDMARKS[model_complexity],
            self.body, num_landmarks=NUM_LANDMARKS, num_body=NUM_BODY,
            heatmap_kernel=HEATMAP_KERNEL, pose_roi=POSE_ROI, pairs=len(POSE_CONNECTIONS),
            result=PoseResult, frame_size=frame_size,
        )  # fmt: skip
        return HolisticFrame(
            b, pose, recrop=b.engines["hand_recrop"], hand=b.engines["hand_landmark"],
            face_detector=self.face_detector, face=b.engines["face_landmark"],
            crops={"recrop": RECROP, "hand": HAND, "face": face_mesh.LANDMARKS[False]},
            sides=HAND_SIDES, visibility=HAND_VISIBILITY, threshold=PRESENCE,
            normalize_z=hands.NORMALIZE_Z, face_points=FACE_POINTS.stop,
            pairs=(len(HAND_CONNECTIONS), len(FACEMESH_CONTOURS)), result=HolisticResult,
            frame_size=frame_size,
        )  # fmt: skip

    @classmethod
    def models(cls, model_complexity: int = 1, refine_face_landmarks: bool = False,
               **_) -> tuple[str, ...]:  # fmt: skip
        """The manifest's models these options run."""
        return (
            *Pose.models(model_complexity),
            RECROP.model,
            HAND.model,
            *face_mesh.FaceMesh.models(refine_face_landmarks),
        )

    def reset(self) -> None:
        """Forget every tracked part, the pose's filters and the last timestamp."""
        self.body.new_filters()
        self._previous = {}
        if self.program is not None:
            self.program.reset()
        self._last_ts = None

    def _configure(self, frame_size) -> None:
        self.body.configure(frame_size)
        self._previous = {}
        if self.program is not None:
            self.program.configure(frame_size)

    def track(self, frame, timestamp_ms) -> HolisticResult:
        size = self.frame_size
        pose = self.body(frame, timestamp_ms)
        rois: dict[str, Rect] = {}
        if pose.landmarks is not None:
            rois.update(self._hand_rois(frame, size, pose))
            face_roi = self._face_roi(frame, size, pose)
            if face_roi is not None:
                rois["face"] = face_roi
        found = self._landmarks(frame, size, rois)
        self._previous = found
        return HolisticResult(replace(pose, backend=self.backend.name), found.get("left"),
                              found.get("right"), found.get("face"), rois, size,
                              timestamp_ms)  # fmt: skip

    # --- hands ---------------------------------------------------------------------------
    def _hand_rois(self, frame, size, pose: PoseResult) -> dict[str, Rect]:
        """Each visible hand's ROI: re-cropped from the pose's, or the tracked one."""
        lm = pose.landmarks[:, :2]
        from_pose = {}
        for side, (wrist, pinky, index) in HAND_SIDES.items():
            if pose.visibility[wrist] > HAND_VISIBILITY:
                rect = hand_rect_from_pose(lm[wrist], lm[pinky], lm[index], size)
                from_pose[side] = transform_rect(rect, size, HAND_FROM_POSE_ROI)
        outputs = self.recrops.run(frame, size, list(from_pose.values()))
        rois = {}
        for (side, rect), (out, padding) in zip(from_pose.items(), outputs, strict=True):
            points = crop_landmarks(next(iter(out.values())), self.recrops.size, dims=2)
            points = project_to_frame(remove_letterbox(points, padding), rect)
            recrop = transform_rect(alignment_rect(points, size, HAND_RECROP_ROI), size,
                                    HAND_RECROP_ROI)  # fmt: skip
            rois[side] = self._tracked_or(side, recrop, size, hands.hand_roi_from_landmarks,
                                          HAND_TRACKING)  # fmt: skip
        return rois

    # --- face ------------------------------------------------------------------------------
    def _face_roi(self, frame, size, pose: PoseResult) -> Rect | None:
        """Face detection inside the pose's face region, its best detection -> the ROI."""
        points = pose.landmarks[FACE_POINTS, :2]
        rect = transform_rect(detection_rect(landmarks_box(points), points, size,
                                             FACE_FROM_POSE_ROI), size, FACE_FROM_POSE_ROI)  # fmt: skip
        m = self._padded_matrix(rect, size, self.face_detector.spec.input_size)
        self.face_detector.set_transform(m, size)
        detections = self.face_detector.detect(frame)
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

    def _landmarks(self, frame, size, rois: dict[str, Rect]) -> dict[str, np.ndarray]:
        found = {}
        hand_parts = [p for p in ("left", "right") if p in rois]
        for part, (out, padding) in zip(
            hand_parts, self.hands.run(frame, size, [rois[p] for p in hand_parts]), strict=True
        ):
            decoded = hands.decode_hand(out, padding, rois[part], self.hand_names,
                                        self.hands.size, PRESENCE)  # fmt: skip
            if decoded is not None:
                found[part] = decoded[0]
        if "face" in rois:
            ((out, _),) = self.faces.run(frame, size, [rois["face"]])
            lm, presence = face_mesh.face_landmarks(out, self.face_model.graph, self.faces.size,
                                                    self.refine)  # fmt: skip
            if presence > PRESENCE:
                found["face"] = project_to_frame(lm, rois["face"])
        return found
