"""The detect-then-track stage: what FaceMesh, Hands, Pose and Holistic's pose share.

MediaPipe's *_landmark_tracking / *_landmark_front graphs, one loop:
1. the detector runs when fewer than `max_objects` objects were tracked into this frame
   (always for stills: `tracking=False`); its best `max_objects` detections each become a
   ROI (`roi_from_detection`: the declaration's DetectionsToRects + RectTransformation);
2. the detections' ROIs, then the tracked ROIs, are associated
   (tracking.associate_rects: a tracked object wins over a detection it overlaps);
3. the crop model runs on every ROI (one submit on webgpu), each crop's outputs decoded
   (`decode(outputs, padding, rect, tracked)` -> an object, or None when its flag fails);
4. each kept object's next ROI comes from its landmarks (`next_roi(object)`).

- declaration: `CropModel` (manifest model, value range, border, aspect kept or not);
  the detector's is engine/vision/detector.DetectorModel
- input: a frame as the backend's frames give it, its size
- output: `track(frame, size)` -> (objects, detections or None when the detector did not run)
- state: the tracked ROIs (`reset()` forgets them; another frame size too)
- usage:
    stage = DetectTrack(backend, HANDS_DETECTOR, HAND_LANDMARKS, palm_model, hand_model,
                        max_objects=2, min_score=0.5, roi_from_detection=..., decode=...,
                        next_roi=..., tracking=True)
    hands, palms = stage.track(frame, size)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from engine.vision.detector import DetectorModel, ssd_spec
from engine.vision.roi import Rect
from engine.vision.tracking import associate_rects


@dataclass(frozen=True)
class CropModel:
    """A crop model: its manifest model and how a ROI becomes its input
    (ImageToTensorCalculator's value range, border, and keep_aspect_ratio)."""

    model: str
    value_range: tuple[float, float]
    border: str
    keep_aspect: bool


class DetectTrack:
    """The loop of the module docstring over one detector and one crop model."""

    def __init__(self, backend, detector: DetectorModel, detector_model, crop: CropModel,
                 crop_model, *, max_objects: int, min_score: float, max_detections: int,
                 roi_from_detection: Callable, decode: Callable, next_roi: Callable,
                 tracking: bool):  # fmt: skip
        spec = ssd_spec(detector_model.graph, min_score)
        self.detector = backend.detector(detector_model, spec, max_detections,
                                         detector.value_range, detector.border)  # fmt: skip
        self.crops = backend.crops(crop_model, crop.value_range, crop.border, crop.keep_aspect)
        self.max_objects, self.tracking = int(max_objects), tracking
        self.roi_from_detection, self.decode, self.next_roi = roi_from_detection, decode, next_roi
        self.tracked: list[Rect] = []  # the next frame's ROIs, from this frame's objects

    def configure(self, frame_size) -> None:
        self.detector.configure(frame_size)
        self.tracked = []  # another frame size: the tracked ROIs mean nothing

    def reset(self) -> None:
        """Forget the tracked objects: the next frame detects."""
        self.tracked = []

    def track(self, frame, size) -> tuple[list, tuple | None]:
        tracked = self.tracked if self.tracking else []
        detections, detected = None, []
        if len(tracked) < self.max_objects:
            detections = self.detector.detect(frame)
            detected = [self.roi_from_detection(d, size) for d in detections[: self.max_objects]]
        rois = associate_rects(detected, tracked)
        outputs = self.crops.run(frame, size, [rect for _, rect in rois])
        found = []
        for (stream, rect), (out, padding) in zip(rois, outputs, strict=True):
            obj = self.decode(out, padding, rect, stream == 1)
            if obj is not None:
                found.append(obj)
        self.tracked = [self.next_roi(o) for o in found] if self.tracking else []
        return found, detections
