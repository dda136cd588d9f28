"""FaceDetector: MediaPipe's face detection solution on the engine.

- input: frames (see base.py); model_selection 0: face_detection_short_range (faces within
  ~2 m, 128x128), 1: face_detection_full_range_sparse (within ~5 m, 192x192)
- output: `FaceDetectorResult`: every face (score, box, 6 keypoints; pixels and normalised)
- options: model_selection (0), min_detection_confidence (None: the model's graph's own
  threshold, 0.5 short range and 0.6 full range, which MediaPipe 0.10.14 keeps whatever
  its Python API is given; a number sets another), max_detections (16), and base.py's
- semantics: MediaPipe's face_detection_short_range / _full_range graphs
  (face_detection.pbtxt): the whole frame letterboxed into the model's input
  (keep_aspect_ratio, BORDER_ZERO, values in [-1, 1]), SSD decode + weighted NMS
  (engine/vision/detector.py), boxes projected back through the letterbox matrix, at the
  graph's score threshold (the manifest's min_score: face_detection_short_range.pbtxt 0.5,
  face_detection_full_range.pbtxt 0.6; measured: MediaPipe 0.10.14's FaceDetection gives
  the same detections at min_detection_confidence 0.3, 0.5, 0.65 and 0.8, docs/vision.md)
- GPU: on webgpu the whole frame is one GPU frame (gpu_frames.DetectorFrame): `gpu` is the
  decoder's records (DetectionRecord layout, best first), `status` (u32 count first) and
  `record`
- usage:
    with FaceDetector() as fd:
        for det in fd.process(rgb).detections: print(det.score, det.box_px)
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.vision import records
from engine.vision.detector import DetectorModel, ssd_spec
from engine.vision.gpu_frames import DetectorFrame
from engine.vision.results import Detection
from engine.vision.solutions.base import Solution, check_confidence
from engine.vision.uploads import DetectionBuffers

# face_detection.pbtxt: output_tensor_float_range [-1, 1], BORDER_ZERO, both models
DETECTORS = {
    0: DetectorModel("face_detection_short_range", (-1.0, 1.0), "zero"),
    1: DetectorModel("face_detection_full_range_sparse", (-1.0, 1.0), "zero"),
}


@dataclass(frozen=True)
class FaceDetectorResult:
    detections: tuple[Detection, ...] | None  # highest score first; None: output="gpu"
    image_size: tuple[int, int]  # (width, height)
    timestamp_ms: int | None = None
    gpu: object = None  # FaceDetector.gpu: the records, count and draw args on the GPU
    backend: str = "webgpu"  # which ran the models: "webgpu" or "xnnpack"


FIELDS = {**records.FRAME, "faces": records.I32, "detections": [records.DETECTION]}


def record(res: FaceDetectorResult) -> dict:
    return {"faces": len(res.detections), "detections": records.detections(res.detections)}


class FaceDetector(Solution):
    """MediaPipe's FaceDetection on the engine; see the module docstring."""

    def __init__(self, model=None, *, model_selection: int = 0,
                 min_detection_confidence: float | None = None, max_detections: int = 16,
                 **options):  # fmt: skip
        if model_selection not in DETECTORS:
            raise ValueError(f"model_selection must be 0 (short range, faces within ~2 m) or "
                             f"1 (full range, within ~5 m), not {model_selection!r}")  # fmt: skip
        if min_detection_confidence is not None:
            check_confidence(min_detection_confidence=min_detection_confidence)
        super().__init__(**options)
        declared = DETECTORS[model_selection]
        engine = self.backend.model("detection", model, declared.model)
        spec = ssd_spec(engine.graph, min_detection_confidence)
        self.detector = self.backend.detector(engine, spec, max_detections,
                                              declared.value_range, declared.border)  # fmt: skip
        self.program = self.backend.gpu_stage(
            lambda: DetectorFrame(
                self.backend, self.detector, FaceDetectorResult, lambda: self.frame_size
            )  # fmt: skip
        )
        self.uploads = None  # the CPU-decided path with output="gpu": the detections uploaded
        if self.program is None and self.output == "gpu":
            self.uploads = DetectionBuffers(self.device, spec.num_keypoints, max_detections)

    @classmethod
    def models(cls, model_selection: int = 0, **_) -> tuple[str, ...]:
        """The manifest's models these options run."""
        return (DETECTORS[model_selection].model,)

    @property
    def gpu(self):
        return self.program.gpu if self.program is not None else self.uploads

    @property
    def num_keypoints(self) -> int:
        return self.detector.spec.num_keypoints

    def _configure(self, frame_size) -> None:
        self.detector.configure(frame_size)

    def track(self, frame, timestamp_ms) -> FaceDetectorResult:
        detections = self.detector.detect(frame)
        if self.uploads is not None:
            self.uploads.write(detections)
        return FaceDetectorResult(detections, self.frame_size, timestamp_ms, gpu=self.uploads)

    def _uploads(self) -> list:
        return [self.uploads] if self.uploads is not None else []
