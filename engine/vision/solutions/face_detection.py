"""FaceDetector: MediaPipe's face detection solution on the engine (model_selection=0).

- input: frames (see base.py); the short-range BlazeFace model by default
- output: `FaceDetectorResult`: every face (score, box, 6 keypoints; pixels and normalised)
- options: min_detection_confidence (0.5), max_detections (16), and base.py's
- semantics: MediaPipe's face_detection_short_range graph (face_detection.pbtxt): the whole
  frame letterboxed into 128x128 (keep_aspect_ratio, BORDER_ZERO, values in [-1, 1],
  engine/vision/image_to_tensor.py), SSD decode + weighted NMS (engine/vision/detections.py),
  boxes projected back through the letterbox matrix
- usage:
    with FaceDetector() as fd:
        for det in fd.process(rgb).detections: print(det.score, det.box_px)
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from engine.vision.detections import SsdDecoder
from engine.vision.image_to_tensor import letterbox_matrix
from engine.vision.preprocess import Preprocessor
from engine.vision.solutions.base import Solution, Step, manifest_entry
from engine.vision.solutions.cpu_detector import CpuDetector
from engine.vision.solutions.cpu_upload import DetectionBuffers
from engine.vision.solutions.results import Detection, FaceDetectorResult
from engine.vision.ssd_spec import SsdSpec

DETECTOR_MODEL = "face_detection_short_range"
VALUE_RANGE = (-1.0, 1.0)  # face_detection.pbtxt: output_tensor_float_range
BORDER = "zero"  # face_detection.pbtxt: BORDER_ZERO


def ssd_outputs(engine) -> tuple[str, str]:
    """(boxes, scores) among an SSD detector's outputs: [1, N, 4 + 2K] and [1, N, 1]."""
    g = engine.graph
    outs = {g.tensors[t].name: tuple(g.tensors[t].shape) for t in g.outputs}
    boxes = [n for n, s in outs.items() if len(s) == 3 and s[2] >= 4 and (s[2] - 4) % 2 == 0]
    scores = [n for n, s in outs.items() if len(s) == 3 and s[2] == 1]
    if not boxes or not scores:
        raise ValueError(f"not an SSD detector: outputs {outs}")
    return boxes[0], scores[0]


def input_name(engine) -> str:
    g = engine.graph
    return g.tensors[g.inputs[0]].name


def detector_spec(model, engine, min_score: float) -> SsdSpec:
    """The manifest's SSD options for the model's file, else BlazeFace's at its input size."""
    entry = manifest_entry(model) if model is not None else None
    if entry is not None and entry.postprocess.get("kind") == "ssd":
        spec = SsdSpec.from_manifest(entry.postprocess)
    else:
        g = engine.graph
        _, h, w, _ = g.tensors[g.inputs[0]].shape
        spec = SsdSpec(input_size=(int(w), int(h)))
    return replace(spec, min_score=float(min_score))


def detector_stages(solution, engine, spec: SsdSpec, max_detections: int = 16,
                    value_range: tuple[float, float] = VALUE_RANGE, border: str = BORDER):  # fmt: skip
    """The detector of `solution` on its backend: DetectorStages on webgpu, its twin
    CpuDetector (solutions/cpu_detector.py) on xnnpack."""
    if solution.backend == "xnnpack":
        names = ssd_outputs(engine)
        return CpuDetector(engine, spec, names, max_detections, value_range, border)
    return DetectorStages(engine, spec, max_detections, value_range, border)


class DetectorStages:
    """Letterbox pre-process -> detector -> decode + NMS, shared by the detecting solutions
    (defaults: BlazeFace's value range and border)."""

    def __init__(self, engine, spec: SsdSpec, max_detections: int = 16,
                 value_range: tuple[float, float] = VALUE_RANGE, border: str = BORDER):  # fmt: skip
        self.engine, self.spec = engine, spec
        self.pre = Preprocessor(engine, input_name(engine), value_range, border=border)
        self.decoder = SsdDecoder(engine, spec, names=ssd_outputs(engine),
                                  max_detections=max_detections)  # fmt: skip

    def configure(self, frame_size: tuple[int, int]) -> None:
        self.set_transform(letterbox_matrix(frame_size, self.spec.input_size), frame_size)

    def set_transform(self, frame_from_tensor: np.ndarray, frame_size) -> None:
        """The crop the detector sees (normalised tensor -> frame pixels) and the frame size."""
        self.pre.set_roi(frame_from_tensor)
        self.decoder.set_frame_transform(frame_from_tensor, frame_size)

    def detect(self, view, readback) -> tuple[Detection, ...]:
        """The detector alone on `view`: one submit, its records read back through
        `readback` (add_readback's), parsed."""
        device = self.engine.ctx.device
        encoder = device.create_command_encoder()
        for _, encode in self.steps(view):
            encode(encoder)
        readback.encode(encoder, names=("det_status", "det_records"))
        device.queue.submit([encoder.finish()])
        return self.parse(readback.read())

    def steps(self, view) -> list[Step]:
        return [
            ("preprocess", lambda enc: self.pre.encode(enc, view)),
            ("inference", self.engine.encode),
            ("postprocess", self.decoder.encode),
        ]

    def add_readback(self, readback) -> None:
        readback.add("det_status", self.decoder.status, 0, 16)
        readback.add("det_records", self.decoder.detections)

    def parse(self, data: dict[str, bytes]) -> tuple[Detection, ...]:
        """Detections from the read-back status and records."""
        count = int(np.frombuffer(data["det_status"], np.uint32)[0])
        rec = self.decoder.record
        raw = np.frombuffer(data["det_records"], np.float32)
        recs = raw[: self.decoder.max_detections * rec.stride].reshape(-1, rec.stride)[:count]
        k = rec.num_keypoints
        out = []
        for r in recs.astype(np.float64):
            px, norm = r[rec.frame_px : rec.frame_px + rec.coords], r[rec.frame_norm :]
            out.append(Detection(
                score=float(r[0]), box=norm[:4].copy(), box_px=px[:4].copy(),
                keypoints=norm[4 : 4 + 2 * k].reshape(k, 2).copy(),
                keypoints_px=px[4:].reshape(k, 2).copy(),
            ))  # fmt: skip
        return tuple(out)

    def owned_buffers(self) -> list:
        d = self.decoder
        return [self.pre.roi, d.anchors, d.params, d.detections, d.status, d.args]


class FaceDetector(Solution):
    """MediaPipe's FaceDetection (model_selection=0) on the engine; see the module docstring.

    `gpu`: the SsdDecoder: `detections` (records of DetectionRecord layout, best first),
    `status` (u32 count first), `record`."""

    def __init__(self, model=None, *, model_selection: int = 0,
                 min_detection_confidence: float = 0.5, max_detections: int = 16,
                 **options):  # fmt: skip
        if model_selection != 0:
            raise ValueError("model_selection: only 0 (short range, faces within ~2 m)")
        super().__init__(**options)
        engine = self._engine("detection", model, DETECTOR_MODEL)
        spec = detector_spec(model or DETECTOR_MODEL + ".tflite", engine,
                             min_detection_confidence)  # fmt: skip
        self.stages = detector_stages(self, engine, spec, max_detections)
        self.stages.add_readback(self.readback)
        self.uploaded = None  # xnnpack with output="gpu": the detections uploaded
        if self.backend == "xnnpack" and self.output == "gpu":
            self.uploaded = DetectionBuffers(self.device, spec.num_keypoints, max_detections)

    @property
    def gpu(self) -> SsdDecoder:
        return self.uploaded if self.backend == "xnnpack" else self.stages.decoder

    @property
    def num_keypoints(self) -> int:
        return self.stages.spec.num_keypoints

    def _configure(self, frame_size) -> None:
        self.stages.configure(frame_size)

    def steps(self, frame_view) -> list[Step]:
        if self.backend == "xnnpack":
            return self._cpu_steps(frame_view)
        return self.stages.steps(frame_view)

    def _process_cpu(self, image, timestamp_ms) -> FaceDetectorResult:
        detections = self.stages.detect(image)
        if self.uploaded is not None:
            self.uploaded.write(detections)
        return FaceDetectorResult(detections, self.frame_size, timestamp_ms, gpu=self.uploaded)

    def _result(self, data, timestamp_ms) -> FaceDetectorResult:
        return FaceDetectorResult(self.stages.parse(data), self.frame_size, timestamp_ms)

    def _gpu_result(self, timestamp_ms) -> FaceDetectorResult:
        return FaceDetectorResult(None, self.frame_size, timestamp_ms, gpu=self.gpu)

    def _uploaders(self) -> list:
        return [self.uploaded] if self.uploaded is not None else []

    def _owned_buffers(self) -> list:
        uploaded = self.uploaded.buffers() if self.uploaded is not None else []
        return [*self.stages.owned_buffers(), *uploaded]
