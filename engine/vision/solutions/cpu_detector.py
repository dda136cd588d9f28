"""DetectorStages' CPU twin: letterbox pre-process -> detector on XNNPACK -> decode + NMS.

- input: an RGB frame (H, W, 3) uint8 (engine/vision/cpu_frames.py); an XnnpackModel of an
  SSD detector, its SsdSpec (face_detector.detector_spec) and output names (ssd_outputs);
  made by face_detector.detector_stages on the xnnpack backend
- output: `detect(image)` -> the detections as DetectorStages.parse gives them (Detection:
  score, box and keypoints in frame pixels and normalised), best first, at most
  max_detections
- semantics: DetectorStages' on the GPU, in numpy: the frame through the matrix of
  `configure` (the letterbox, face_detector.letterbox_matrix) or `set_transform` (Holistic's
  face crop) by engine/vision/image_to_tensor.warp_to_tensor, the model, then
  engine/vision/ssd.py (anchor decode, sigmoid scores >= min_score, weighted NMS, the boxes
  and keypoints mapped back through the matrix)
- usage:
    det = CpuDetector(model, spec, ssd_outputs(model), 16, (-1.0, 1.0), "zero")
    det.configure((640, 480))
    for d in det.detect(rgb): print(d.score, d.box_px)
"""

from __future__ import annotations

import numpy as np

from engine.vision import ssd
from engine.vision.image_to_tensor import letterbox_matrix, warp_to_tensor
from engine.vision.solutions.results import Detection
from engine.vision.ssd_spec import SsdSpec, ssd_anchors


class CpuDetector:
    """One SSD detector on numpy frames (see the module docstring)."""

    def __init__(self, model, spec: SsdSpec, names: tuple[str, str], max_detections: int,
                 value_range: tuple[float, float], border: str):  # fmt: skip
        self.engine, self.spec, self.max_detections = model, spec, max_detections
        self.value_range, self.border = value_range, border
        self.names = names  # (boxes, scores): face_detector.ssd_outputs
        self.anchors = ssd_anchors(spec)
        self.matrix: np.ndarray | None = None
        self.frame_size: tuple[int, int] | None = None

    def configure(self, frame_size: tuple[int, int]) -> None:
        self.set_transform(letterbox_matrix(frame_size, self.spec.input_size), frame_size)

    def set_transform(self, frame_from_tensor: np.ndarray, frame_size) -> None:
        """The crop the detector sees (normalised tensor -> frame pixels) and the frame size."""
        self.matrix, self.frame_size = np.asarray(frame_from_tensor, np.float64), frame_size

    def detect(self, image: np.ndarray, readback=None) -> tuple[Detection, ...]:
        """The frame's detections, best first (`readback`: DetectorStages' argument, unused)."""
        spec = self.spec
        tensor = warp_to_tensor(image, self.matrix, spec.input_size, self.value_range, self.border)
        out = self.engine.run(tensor)
        boxes_name, scores_name = self.names
        boxes, keypoints = ssd.decode_boxes(out[boxes_name], self.anchors, spec)
        scores = ssd.scores_from_logits(out[scores_name], spec.score_clip)
        kept = ssd.threshold(boxes, keypoints, scores, spec.min_score)
        found = ssd.project(ssd.weighted_nms(kept, spec.iou_threshold), self.matrix)
        return detections(found, self.frame_size, self.max_detections)

    def add_readback(self, readback) -> None:
        """Nothing to read back: the detections are numbers already."""

    def owned_buffers(self) -> list:
        return []


def detections(found: ssd.Detections, frame_size, limit: int) -> tuple[Detection, ...]:
    """ssd.Detections in frame pixels -> Detection records (pixels and normalised)."""
    size = np.asarray(frame_size, np.float64)
    out = []
    for k in range(min(len(found), limit)):
        box_px = np.asarray(found.boxes[k], np.float64)
        kps_px = np.asarray(found.keypoints[k], np.float64).reshape(-1, 2)
        out.append(Detection(
            score=float(found.scores[k]), box=box_px / np.tile(size, 2), box_px=box_px,
            keypoints=kps_px / size, keypoints_px=kps_px,
        ))  # fmt: skip
    return tuple(out)
