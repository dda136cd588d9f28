"""Hands: MediaPipe's hand tracking solution on the engine (21 landmarks per hand, tracked).

- input: frames (see base.py); palm_detection_full + hand_landmark_full by default
  (model_complexity=1), the lite pair with model_complexity=0
- output: `HandsResult`: per hand its 21 landmarks (normalised and pixels), world landmarks
  (metres), handedness, presence and ROI; the palm detections when the detector ran;
  MediaPipe's names `multi_hand_landmarks`, `multi_hand_world_landmarks`,
  `multi_handedness` (None when no hand, as MediaPipe)
- options: static_image_mode / running_mode ("image": detect on every frame),
  max_num_hands (2), model_complexity (1), min_detection_confidence (0.5: the palm score),
  min_tracking_confidence (0.5: the hand flag), and base.py's
- semantics: MediaPipe 0.10.14's hand_landmark_tracking_cpu graph:
  1. the palm detector runs when fewer than max_num_hands hands were tracked into this
     frame (always for stills): the frame letterboxed into 192x192 (BORDER_ZERO, [0, 1]),
     SSD decode + weighted NMS (engine/vision/detections.py), the best max_num_hands palms,
     each -> a ROI (roi.PALM_ROI: wrist -> middle finger MCP upright, x2.6, shifted up);
  2. the palms' ROIs, then the tracked ROIs, associated (tracking.associate_rects: a
     tracked hand wins over a palm it overlaps);
  3. per ROI, hand_landmark on the 224x224 crop (aspect kept, border replicated, [0, 1]):
     a hand is kept when its flag > min_tracking_confidence; landmarks projected back
     (z / 224 / 0.4 * ROI width), world landmarks rotated by the ROI, handedness p > 0.5 ->
     "Left" (p) else "Right" (1 - p), the model's own label (MediaPipe mirrors nothing);
  4. each kept hand's next ROI from its landmarks (roi.hand_rect_from_landmarks, x2.0,
     shifted up 0.1). No smoothing: MediaPipe's hand graph has none.
- GPU: pre-processing, both models and the SSD decode run on the GPU; the per-hand
  decisions (ROIs, association, flags, projection) are numpy float64 on what is read back
  (the detections, then 4 small tensors per hand: about 1 KB): two submits per frame when
  the detector runs, one while every hand is tracked
- usage:
    with Hands(max_num_hands=2) as hands:
        for i, rgb in enumerate(frames):
            res = hands.process(rgb, timestamp_ms=33 * i)
            for hand in res.hands: print(hand.handedness.label, hand.landmarks_px[8])
"""

from __future__ import annotations

import numpy as np

from engine.errors import ModelError
from engine.vision.landmarks import (
    crop_landmarks,
    project_to_frame,
    project_world,
    remove_letterbox,
)
from engine.vision.roi import (
    HAND_LANDMARKS_ROI,
    PALM_ROI,
    Rect,
    hand_rect_from_landmarks,
    roi_from_detection,
    transform_rect,
)
from engine.vision.solutions.base import Solution
from engine.vision.solutions.face_detector import detector_spec, detector_stages
from engine.vision.solutions.results import Classification, HandLandmarks, HandsResult
from engine.vision.tracking import associate_rects

PALM_MODELS = {0: "palm_detection_lite", 1: "palm_detection_full"}
LANDMARK_MODELS = {0: "hand_landmark_lite", 1: "hand_landmark_full"}
PALM_RANGE, PALM_BORDER = (0.0, 1.0), "zero"  # palm_detection_cpu.pbtxt
LANDMARK_RANGE, LANDMARK_BORDER = (0.0, 1.0), "replicate"  # hand_landmark_cpu.pbtxt
NORMALIZE_Z = 0.4  # hand_landmark_cpu.pbtxt: TensorsToLandmarksCalculator normalize_z
HANDEDNESS = ("Left", "Right")  # handedness.txt; binary: index 0 scores p, index 1 1 - p
NUM_LANDMARKS = 21


def hand_outputs(engine) -> tuple[str, str, str, str]:
    """(landmarks, presence, handedness, world) of a hand landmark model, by output order
    (InferenceCalculator's: the graph splits them in this order)."""
    g = engine.graph
    outs = [(g.tensors[t].name, int(np.prod(g.tensors[t].shape))) for t in g.outputs]
    sizes = [n for _, n in outs]
    if sizes != [NUM_LANDMARKS * 3, 1, 1, NUM_LANDMARKS * 3]:
        raise ModelError(f"{g.name}: not a hand landmark model: outputs {outs}, expected "
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


class Hands(Solution):
    """MediaPipe's Hands on the engine; see the module docstring."""

    def __init__(self, palm_model=None, landmark_model=None, *,
                 static_image_mode: bool | None = None, running_mode: str = "video",
                 max_num_hands: int = 2, model_complexity: int = 1,
                 min_detection_confidence: float = 0.5, min_tracking_confidence: float = 0.5,
                 max_detections: int = 16, **options):  # fmt: skip
        if model_complexity not in PALM_MODELS:
            raise ValueError(f"model_complexity must be 0 or 1, not {model_complexity!r}")
        if max_num_hands < 1:
            raise ValueError(f"max_num_hands must be at least 1, not {max_num_hands}")
        for name, value in (("min_detection_confidence", min_detection_confidence),
                            ("min_tracking_confidence", min_tracking_confidence)):  # fmt: skip
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"{name} must be in [0, 1], not {value}")
        if static_image_mode is not None:
            running_mode = "image" if static_image_mode else "video"
        super().__init__(running_mode=running_mode, **options)
        self.max_num_hands = int(max_num_hands)
        self.min_tracking_confidence = float(min_tracking_confidence)
        palm_default = PALM_MODELS[model_complexity]
        palm = self._engine("palm_detection", palm_model, palm_default)
        spec = detector_spec(palm_model or palm_default + ".tflite", palm,
                             min_detection_confidence)  # fmt: skip
        self.detector = detector_stages(self, palm, spec, max_detections, PALM_RANGE, PALM_BORDER)
        self.detector.add_readback(self.readback)
        hand = self._engine("hand_landmark", landmark_model, LANDMARK_MODELS[model_complexity])
        self.outputs = hand_outputs(hand)
        self.crops = self._roi_model(hand, LANDMARK_RANGE, LANDMARK_BORDER, keep_aspect=True)
        self.tracking = self.running_mode == "video"
        self._tracked: list[Rect] = []  # the next frame's ROIs from this frame's hands

    def reset(self) -> None:
        """Forget the tracked hands and the last timestamp (a new video)."""
        self._tracked = []
        self._last_ts = None

    def _configure(self, frame_size) -> None:
        self.detector.configure(frame_size)
        self._tracked = []  # another frame size: the tracked ROIs mean nothing

    def _process(self, frame, timestamp_ms) -> HandsResult:
        view, size = self.frames(frame)
        self.prepare(size)
        tracked = self._tracked if self.tracking else []
        palms, palm_rects = None, []
        if len(tracked) < self.max_num_hands:
            palms = self._detect_palms(view)
            palm_rects = [roi_from_detection(p.box, p.keypoints, size, PALM_ROI)
                          for p in palms[: self.max_num_hands]]  # fmt: skip
        rois = associate_rects(palm_rects, tracked)
        outputs = self.crops.run(view, size, [rect for _, rect in rois])
        hands = []
        for (stream, rect), (out, padding) in zip(rois, outputs, strict=True):
            hand = self._hand(out, padding, rect, size, tracked=stream == 1)
            if hand is not None:
                hands.append(hand)
        self._tracked = [self._next_roi(h, size) for h in hands] if self.tracking else []
        if self.output == "gpu":
            return HandsResult(None, None, size, timestamp_ms, gpu=tuple(hands))
        return HandsResult(tuple(hands), palms, size, timestamp_ms)

    def _detect_palms(self, view):
        return self.detector.detect(view, self.readback)

    def _hand(self, out, padding, rect: Rect, size, tracked: bool) -> HandLandmarks | None:
        decoded = decode_hand(out, padding, rect, self.outputs, self.crops.size,
                              self.min_tracking_confidence)  # fmt: skip
        if decoded is None:
            return None
        lm, presence = decoded
        fw, fh = size
        _, _, handedness_name, world_name = self.outputs
        p = float(out[handedness_name].reshape(-1)[0])
        handedness = Classification(0, p, HANDEDNESS[0]) if p > 0.5 else \
            Classification(1, 1.0 - p, HANDEDNESS[1])  # fmt: skip
        return HandLandmarks(
            landmarks=lm, landmarks_px=lm * (fw, fh, fw),
            world_landmarks=project_world(out[world_name], rect), handedness=handedness,
            presence=presence, roi=rect, tracked=tracked,
        )  # fmt: skip

    @staticmethod
    def _next_roi(hand: HandLandmarks, size) -> Rect:
        return transform_rect(hand_rect_from_landmarks(hand.landmarks, size), size,
                              HAND_LANDMARKS_ROI)  # fmt: skip

    def steps(self, frame_view):
        raise NotImplementedError(
            "Hands decides its hand ROIs on the CPU between two submits; use process()"
        )

    def _owned_buffers(self) -> list:
        return [*self.detector.owned_buffers(), *self.crops.owned_buffers()]

    @property
    def readback_maps(self) -> int:
        return self.readback.maps + self.crops.readback.maps

    def close(self) -> None:
        if not self._closed:
            self.crops.destroy()
        super().close()
