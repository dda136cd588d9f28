"""Hands: MediaPipe's hand tracking solution on the engine (21 landmarks per hand, tracked).

- input: frames (see base.py); palm_detection_full + hand_landmark_full by default
  (model_complexity=1), the lite pair with model_complexity=0
- output: `HandsResult`: per hand its 21 landmarks (normalised and pixels), world landmarks
  (metres), handedness, presence and ROI; the palm detections when the detector ran;
  MediaPipe's names `multi_hand_landmarks`, `multi_hand_world_landmarks`,
  `multi_handedness` (None when no hand, as MediaPipe)
- options: static_image_mode / running_mode ("image": detect on every frame),
  max_num_hands (2), model_complexity (1), min_detection_confidence (0.5: the palm score),
  min_tracking_confidence (0.5: the hand flag), max_detections (16), and base.py's
- semantics: MediaPipe 0.10.14's hand_landmark_tracking_cpu graph, the detect-then-track
  stage (engine/vision/detect_track.py):
  1. the palm detector runs when fewer than max_num_hands hands were tracked into this
     frame (always for stills): the frame letterboxed into 192x192 (BORDER_ZERO, [0, 1]),
     SSD decode + weighted NMS, the best max_num_hands palms, each -> a ROI (roi.PALM_ROI:
     wrist -> middle finger MCP upright, x2.6, shifted up);
  2. the palms' ROIs, then the tracked ROIs, associated (a tracked hand wins over a palm
     it overlaps);
  3. per ROI, hand_landmark on the 224x224 crop (aspect kept, border replicated, [0, 1]):
     a hand is kept when its flag > min_tracking_confidence; landmarks projected back
     (z / 224 / 0.4 * ROI width), world landmarks rotated by the ROI, handedness p > 0.5 ->
     "Left" (p) else "Right" (1 - p), the model's own label (MediaPipe mirrors nothing);
  4. each kept hand's next ROI from its landmarks (roi.hand_rect_from_landmarks, x2.0,
     shifted up 0.1). No smoothing: MediaPipe's hand graph has none.
- GPU: on webgpu the pre-processing, both models and the SSD decode run on the GPU; the
  per-hand decisions (ROIs, association, flags, projection) are numpy float64 on what is
  read back (the detections, then 4 small tensors per hand: about 1 KB): two submits per
  frame when the detector runs, one while every hand is tracked
- usage:
    with Hands(max_num_hands=2) as hands:
        for i, rgb in enumerate(frames):
            res = hands.process(rgb, timestamp_ms=33 * i)
            for hand in res.hands: print(hand.handedness.label, hand.landmarks_px[8])
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.errors import ModelError
from engine.vision import records
from engine.vision.connections import HAND_CONNECTIONS
from engine.vision.detect_track import CropModel, DetectTrack
from engine.vision.detector import DetectorModel
from engine.vision.landmarks import (
    crop_landmarks,
    project_to_frame,
    project_world,
    remove_letterbox,
)
from engine.vision.results import Classification, Detection
from engine.vision.roi import (
    HAND_LANDMARKS_ROI,
    PALM_ROI,
    Rect,
    hand_rect_from_landmarks,
    roi_from_detection,
    transform_rect,
)
from engine.vision.solutions.base import Solution, check_confidence, running_mode_of

# model_complexity -> the models; palm_detection_cpu.pbtxt: [0, 1], BORDER_ZERO;
# hand_landmark_cpu.pbtxt: [0, 1], the ROI letterboxed (keep_aspect_ratio), replicate
DETECTORS = {
    0: DetectorModel("palm_detection_lite", (0.0, 1.0), "zero"),
    1: DetectorModel("palm_detection_full", (0.0, 1.0), "zero"),
}
LANDMARKS = {
    0: CropModel("hand_landmark_lite", (0.0, 1.0), "replicate", keep_aspect=True),
    1: CropModel("hand_landmark_full", (0.0, 1.0), "replicate", keep_aspect=True),
}
NORMALIZE_Z = 0.4  # hand_landmark_cpu.pbtxt: TensorsToLandmarksCalculator normalize_z
HANDEDNESS = ("Left", "Right")  # handedness.txt; binary: index 0 scores p, index 1 1 - p
NUM_LANDMARKS = 21


@dataclass(frozen=True)
class HandLandmarks:
    """21 landmarks of one hand (wrist, thumb CMC..tip, index MCP..tip, ... pinky tip)."""

    landmarks: np.ndarray  # (21, 3) normalised x / W, y / H; z relative, on x's scale
    landmarks_px: np.ndarray  # (21, 3) pixels (z * W)
    world_landmarks: np.ndarray  # (21, 3) metres, origin near the hand's centre
    handedness: Classification  # "Left" / "Right" as the model says (a mirrored image's)
    presence: float  # the hand flag, above min_tracking_confidence
    roi: Rect  # the crop the model saw (normalised, rotation in radians)
    tracked: bool  # True: the ROI came from the previous frame's landmarks


@dataclass(frozen=True)
class HandsResult:
    hands: tuple[HandLandmarks, ...] | None  # MediaPipe's order; empty: no hand
    palm_detections: tuple[Detection, ...] | None  # None: the palm detector did not run
    image_size: tuple[int, int]
    timestamp_ms: int | None = None
    gpu: object = None
    backend: str = "webgpu"  # which ran the models: "webgpu" or "xnnpack"

    @property
    def multi_hand_landmarks(self) -> list[np.ndarray] | None:
        """MediaPipe's name: each hand's normalised (21, 3) landmarks; None: no hand."""
        return [h.landmarks for h in self.hands] if self.hands else None

    @property
    def multi_hand_world_landmarks(self) -> list[np.ndarray] | None:
        return [h.world_landmarks for h in self.hands] if self.hands else None

    @property
    def multi_handedness(self) -> list[Classification] | None:
        return [h.handedness for h in self.hands] if self.hands else None


HAND = {"handedness": records.STR, "handedness_score": records.F32, "presence": records.F32,
        "tracked": records.BOOL, "roi": records.RECT, "landmarks_px": (records.F32, 21, 3),
        "world_landmarks": (records.F32, 21, 3)}  # fmt: skip
FIELDS = {**records.FRAME, "hands": records.I32, "detector_ran": records.BOOL,
          "detections": [records.DETECTION], "hand_landmarks": [HAND]}  # fmt: skip


def record(res: HandsResult) -> dict:
    return {"hands": len(res.hands), "detector_ran": res.palm_detections is not None,
            "detections": records.detections(res.palm_detections),
            "hand_landmarks": [{"handedness": h.handedness.label,
                                "handedness_score": float(h.handedness.score),
                                "presence": float(h.presence), "tracked": h.tracked,
                                "roi": records.rect(h.roi), "landmarks_px": h.landmarks_px,
                                "world_landmarks": h.world_landmarks}
                               for h in res.hands]}  # fmt: skip


def hand_outputs(graph) -> tuple[str, str, str, str]:
    """(landmarks, presence, handedness, world) of a hand landmark model, by output order
    (InferenceCalculator's: the graph splits them in this order)."""
    outs = [(graph.tensors[t].name, int(np.prod(graph.tensors[t].shape))) for t in graph.outputs]
    sizes = [n for _, n in outs]
    if sizes != [NUM_LANDMARKS * 3, 1, 1, NUM_LANDMARKS * 3]:
        raise ModelError(f"{graph.name}: not a hand landmark model: outputs {outs}, expected "
                         f"[63, 1, 1, 63] values (landmarks, presence, handedness, world)")  # fmt: skip
    return tuple(name for name, _ in outs)


def decode_hand(out: dict, padding, rect: Rect, names, input_size,
                threshold: float) -> tuple[np.ndarray, float] | None:  # fmt: skip
    """HandLandmarkCpu's decoding of one crop's outputs: None when the hand flag is not
    above `threshold` (strict), else the 21 landmarks in normalised frame coordinates
    (z / 224 / 0.4 * ROI width) and the flag."""
    lm_name, presence_name = names[0], names[1]
    presence = float(out[presence_name].reshape(-1)[0])
    if not presence > threshold:  # ThresholdingCalculator
        return None
    lm = crop_landmarks(out[lm_name], input_size, 3, NORMALIZE_Z)
    return project_to_frame(remove_letterbox(lm, padding), rect), presence


def handedness(p: float) -> Classification:
    """The handedness classification of the model's score p (index 0 "Left" scores p)."""
    if p > 0.5:
        return Classification(0, p, HANDEDNESS[0])
    return Classification(1, 1.0 - p, HANDEDNESS[1])


def hand_roi_from_landmarks(landmarks, size) -> Rect:
    """hand_landmark_landmarks_to_roi.pbtxt: the next frame's ROI of a hand."""
    return transform_rect(hand_rect_from_landmarks(landmarks, size), size, HAND_LANDMARKS_ROI)


class Hands(Solution):
    """MediaPipe's Hands on the engine; see the module docstring."""

    def __init__(self, palm_model=None, landmark_model=None, *,
                 static_image_mode: bool | None = None, running_mode: str = "video",
                 max_num_hands: int = 2, model_complexity: int = 1,
                 min_detection_confidence: float = 0.5, min_tracking_confidence: float = 0.5,
                 max_detections: int = 16, **options):  # fmt: skip
        if model_complexity not in DETECTORS:
            raise ValueError(f"model_complexity must be 0 or 1, not {model_complexity!r}")
        if max_num_hands < 1:
            raise ValueError(f"max_num_hands must be at least 1, not {max_num_hands}")
        check_confidence(min_detection_confidence=min_detection_confidence,
                         min_tracking_confidence=min_tracking_confidence)  # fmt: skip
        super().__init__(running_mode=running_mode_of(static_image_mode, running_mode),
                         **options)  # fmt: skip
        self.max_num_hands = int(max_num_hands)
        self.min_tracking_confidence = float(min_tracking_confidence)
        detector, crop = DETECTORS[model_complexity], LANDMARKS[model_complexity]
        palm = self.backend.model("palm_detection", palm_model, detector.model)
        hand = self.backend.model("hand_landmark", landmark_model, crop.model)
        self.outputs = hand_outputs(hand.graph)
        self.stage = DetectTrack(
            self.backend, detector, palm, crop, hand, max_objects=self.max_num_hands,
            min_score=min_detection_confidence, max_detections=max_detections,
            roi_from_detection=lambda p, size: roi_from_detection(p.box, p.keypoints, size,
                                                                  PALM_ROI),
            decode=self._hand, tracking=self.tracking,
            next_roi=lambda hand: hand_roi_from_landmarks(hand.landmarks, self.frame_size),
        )  # fmt: skip
        self.program = self.backend.gpu_stage(lambda: self._gpu_frame(hand, crop))

    @property
    def gpu(self):
        """The GPU frame's buffers on webgpu (gpu_hands.HandsFrame: points, labels, args,
        tally), else None."""
        return self.program

    def _gpu_frame(self, engine, crop):
        from engine.vision.gpu_hands import HandsFrame

        return HandsFrame(
            self.backend, self.stage.detector, engine, crop, max_objects=self.max_num_hands,
            palm_roi=PALM_ROI, next_roi=HAND_LANDMARKS_ROI,
            threshold=self.min_tracking_confidence, normalize_z=NORMALIZE_Z,
            tracking=self.tracking, pairs=len(HAND_CONNECTIONS),
            result=HandsResult, hand=self._gpu_hand, frame_size=lambda: self.frame_size,
        )  # fmt: skip

    def _gpu_hand(self, lm, world, p: float, flag: float, rect: Rect,
                  tracked: bool) -> HandLandmarks:  # fmt: skip
        fw, fh = self.frame_size
        return HandLandmarks(landmarks=lm, landmarks_px=lm * (fw, fh, fw), world_landmarks=world,
                             handedness=handedness(p), presence=flag, roi=rect,
                             tracked=tracked)  # fmt: skip

    @classmethod
    def models(cls, model_complexity: int = 1, **_) -> tuple[str, ...]:
        """The manifest's models these options run."""
        return (DETECTORS[model_complexity].model, LANDMARKS[model_complexity].model)

    def reset(self) -> None:
        """Forget the tracked hands and the last timestamp (a new video)."""
        self._forget()
        self._last_ts = None

    def _forget(self) -> None:
        self.stage.reset()
        if self.program is not None:
            self.program.reset()

    def _configure(self, frame_size) -> None:
        self.stage.configure(frame_size)
        self._forget()  # another frame size: the tracked ROIs mean nothing

    def track(self, frame, timestamp_ms) -> HandsResult:
        hands, palms = self.stage.track(frame, self.frame_size)
        return HandsResult(tuple(hands), palms, self.frame_size, timestamp_ms)

    def _hand(self, out, padding, rect: Rect, tracked: bool) -> HandLandmarks | None:
        decoded = decode_hand(out, padding, rect, self.outputs, self.stage.crops.size,
                              self.min_tracking_confidence)  # fmt: skip
        if decoded is None:
            return None
        lm, presence = decoded
        fw, fh = self.frame_size
        _, _, handedness_name, world_name = self.outputs
        return HandLandmarks(
            landmarks=lm, landmarks_px=lm * (fw, fh, fw),
            world_landmarks=project_world(out[world_name], rect),
            handedness=handedness(float(out[handedness_name].reshape(-1)[0])),
            presence=presence, roi=rect, tracked=tracked,
        )  # fmt: skip
