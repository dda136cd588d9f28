"""Solutions' frames wholly on the GPU (the webgpu backend makes them: `gpu_stage`).

A GPU frame records a solution's whole frame into one encoder; `process()` submits it and
reads its results back with one map (output="numpy") or leaves them in `gpu`; `steps()`
gives the same work to a caller's encoder (ar-demo), nothing read back.

- `DetectorFrame`: the detector stage (face detection): letterbox pre-process, the model,
  SSD decode + weighted NMS; `gpu` is the decoder (records, count, draw args)
- `SegmenterFrame`: the frame stretched onto a mask model's input, the model; `gpu` is the
  model's output TensorLayout (PHWC4, one slice: vec4 y * W + x, lane 0)
- `FaceMeshFrame`: one tracked face: the detector, the detection's ROI (roi.DetectionRoi),
  the ROI chosen on the GPU between it and the one tracked from the last landmarks
  (tracking.RoiTracker), the crop, face_landmark, the projection (landmarks.
  LandmarkProjector); process() reads the face flag back each frame and leaves the
  detector out while tracking, as MediaPipe; `steps()` records the detector every frame and
  lets the GPU choose (the same results, the detector's cost kept); with an environment
  and output="gpu", the face geometry after the projection (gpu_face_geometry.py: the
  pose and metric mesh in `gpu.geometry`, nothing read back)
Results are built by the solution's classes, given at construction.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.vision.detector import input_name
from engine.vision.gpu_face_geometry import FaceGeometryGpu, GpuFaceGeometry
from engine.vision.landmarks import LandmarkProjector
from engine.vision.preprocess import Preprocessor
from engine.vision.roi import DetectionRoi, Rect
from engine.vision.tracking import RoiTracker


class GpuFrame:
    """What every GPU frame shares: process() and read() over `steps`, one read-back."""

    def __init__(self, backend):
        self.device, self.counts = backend.device, backend.counts
        self.readback = backend.readback()

    def steps(self, view) -> list:
        raise NotImplementedError

    def frame_steps(self, view) -> list:
        """The steps process() records (FaceMesh leaves the detector out while tracking)."""
        return self.steps(view)

    def encode_readback(self, encoder) -> None:
        self.readback.encode(encoder)

    def process(self, view, timestamp_ms, output: str):
        encoder = self.device.create_command_encoder()
        for _, encode in self.frame_steps(view):
            encode(encoder)
        if output == "gpu":
            self.counts.submit(self.device, encoder)
            return self.gpu_result(timestamp_ms)
        self.encode_readback(encoder)
        self.counts.submit(self.device, encoder)
        return self.parse(self.readback.read(), timestamp_ms)

    def read(self, timestamp_ms):
        """The results of the last submitted frame, read back (blocks)."""
        encoder = self.device.create_command_encoder()
        self.encode_readback(encoder)
        self.counts.submit(self.device, encoder)
        return self.parse(self.readback.read(), timestamp_ms)

    def parse(self, data: dict[str, bytes], timestamp_ms):
        raise NotImplementedError

    def gpu_result(self, timestamp_ms):
        raise NotImplementedError

    def destroy(self) -> None:
        self.readback.destroy()


class DetectorFrame(GpuFrame):
    """The detector stage as a whole frame (see the module docstring)."""

    def __init__(self, backend, detector, result, frame_size):
        super().__init__(backend)
        self.detector, self.result, self.frame_size = detector, result, frame_size
        detector.add_readback(self.readback)

    @property
    def gpu(self):
        return self.detector.decoder

    def steps(self, view) -> list:
        return self.detector.steps(view)

    def parse(self, data, timestamp_ms):
        return self.result(self.detector.parse(data), self.frame_size(), timestamp_ms)

    def gpu_result(self, timestamp_ms):
        return self.result(None, self.frame_size(), timestamp_ms, gpu=self.gpu)


class SegmenterFrame(GpuFrame):
    """A mask model on the whole frame (see the module docstring); `mask(data)` turns the
    read-back model-resolution mask into the result."""

    def __init__(self, backend, engine, output_name: str, value_range, border: str, result,
                 frame_size):  # fmt: skip
        super().__init__(backend)
        self.engine, self.result, self.frame_size = engine, result, frame_size
        self.pre = Preprocessor(engine, input_name(engine.graph), value_range, border=border)
        self.gpu = engine.tensor_layout(output_name)
        lay = self.gpu
        self.readback.add("mask", lay.buffer, lay.offset, lay.size)

    def configure(self, frame_from_tensor) -> None:
        self.pre.set_roi(frame_from_tensor)

    def steps(self, view) -> list:
        return [("preprocess", lambda enc: self.pre.encode(enc, view)),
                ("inference", self.engine.encode)]  # fmt: skip

    def model_mask(self, data: bytes) -> np.ndarray:
        """The read-back mask at the model's resolution (h, w) float32."""
        _, h, w, _ = self.gpu.phwc4
        dtype = np.float16 if self.gpu.precision == "fp16" else np.float32
        return np.frombuffer(data, dtype).reshape(h, w, 4)[:, :, 0].astype(np.float32)

    def parse(self, data, timestamp_ms):
        return self.result(self.model_mask(data["mask"]), self.frame_size(), timestamp_ms)

    def gpu_result(self, timestamp_ms):
        return self.result(None, self.frame_size(), timestamp_ms, gpu=self.gpu)

    def destroy(self) -> None:
        super().destroy()
        self.pre.roi.destroy()


@dataclass(frozen=True)
class FaceMeshGpu:
    """Where a frame's face mesh lives on the GPU (valid until the next frame is submitted).

    points: LandmarkProjector.points, vec4 (x, y, z, 1) per landmark in frame pixels, then
    at byte `norm_offset` the same normalised; status: f32 (presence, present, ROI valid, 0);
    args: DrawIndirect (6, 468 or 0, 0, 0); roi: the chosen ROI's 96-byte record
    (shaders/engine/roi_rect.wgsl); detections: the detector's records (SsdDecoder layout);
    geometry: with face_geometry, each face's pose and metric mesh (FaceGeometryGpu)."""

    points: object
    num_points: int
    norm_offset: int
    status: object
    args: object
    roi: object
    detections: object
    geometry: FaceGeometryGpu | None = None


class FaceMeshFrame(GpuFrame):
    """One tracked face on the GPU (see the module docstring). `result(faces, detections,
    frame_size, ts, gpu=None)` and `face(landmarks, landmarks_px, presence, roi, tracked)`
    are the solution's result classes; `environment`: the face geometry's (output="gpu")."""

    def __init__(self, backend, detector, engine, crop, threshold: float, tracking: bool,
                 output: str, result, face, frame_size, environment=None):  # fmt: skip
        super().__init__(backend)
        self.detector, self.engine, self.tracking = detector, engine, tracking
        self.output, self.result, self.face, self.frame_size = output, result, face, frame_size
        self.pre = Preprocessor(engine, input_name(engine.graph), crop.value_range,
                                border=crop.border)  # fmt: skip
        self.detection_roi = DetectionRoi(detector.decoder)
        self.tracker = RoiTracker(self.detection_roi, self.pre)
        self.projector = LandmarkProjector(engine, self.tracker, threshold=threshold,
                                           input_name=input_name(engine.graph))  # fmt: skip
        self.tracker.attach(self.projector)
        p = self.projector
        self.geometry = None  # the face geometry on the GPU (output="gpu": nothing read back)
        if environment is not None and output == "gpu":
            self.geometry = GpuFaceGeometry(backend.ctx, p.points, p.status,
                                            points_start=p.norm_offset // 16, status_start=1,
                                            environment=environment)  # fmt: skip
        self.readback.add("status", p.status, 0, 16)
        self.readback.add("points", p.points)
        self.readback.add("roi", self.tracker.buffer)
        detector.add_readback(self.readback)
        self.present = False  # the last frame read back had a face: skip the detector
        self.ran_detector = True

    @property
    def gpu(self) -> FaceMeshGpu:
        p = self.projector
        geometry = self.geometry.gpu if self.geometry is not None else None
        return FaceMeshGpu(p.points, p.num_points, p.norm_offset, p.status, p.args,
                           self.tracker.buffer, self.detector.decoder, geometry)  # fmt: skip

    def reset(self) -> None:
        self.tracker.reset()
        self.present = False

    def steps(self, view) -> list:
        return self.detector.steps(view) + self._landmark_steps(view)

    def frame_steps(self, view) -> list:
        self.ran_detector = not (self.tracking and self.present and self.output == "numpy")
        return self.steps(view) if self.ran_detector else self._landmark_steps(view)

    def _landmark_steps(self, view) -> list:
        def project(enc) -> None:
            self.projector.encode(enc)
            if self.tracking:
                self.tracker.encode_update(enc)
            if self.geometry is not None:
                self.geometry.configure(self.frame_size())
                self.geometry.encode(enc)

        def detection_roi(enc) -> None:
            self.detection_roi.encode(enc)
            self.tracker.encode_select(enc)

        return [
            ("postprocess", detection_roi),
            ("preprocess", lambda enc: self.pre.encode(enc, view)),
            ("inference", self.engine.encode),
            ("postprocess", project),
        ]

    def encode_readback(self, encoder) -> None:
        names = None if self.ran_detector else ("status", "points", "roi")
        self.readback.encode(encoder, names)

    def parse(self, data, timestamp_ms):
        status = np.frombuffer(data["status"], np.float32)
        present = bool(status[1] > 0.5)
        if self.tracking and self.output == "numpy":
            self.present = present
        faces = (self._face(data, float(status[0])),) if present else ()
        detections = self.detector.parse(data) if self.ran_detector else None
        return self.result(faces, detections, self.frame_size(), timestamp_ms)

    def _face(self, data, presence: float):
        n, off = self.projector.num_points, self.projector.norm_offset // 16
        pts = np.frombuffer(data["points"], np.float32).reshape(-1, 4).astype(np.float64)
        roi = np.frombuffer(data["roi"], np.float32).reshape(6, 4).astype(np.float64)
        fw, fh = self.frame_size()
        (cx, cy, w, h), rotation = roi[4], roi[5, 0]
        rect = Rect(cx / fw, cy / fh, w / fw, h / fh, float(rotation))
        return self.face(
            landmarks=pts[off : off + n, :3].copy(), landmarks_px=pts[:n, :3].copy(),
            presence=presence, roi=rect, tracked=bool(roi[0, 3] > 0.5),
        )  # fmt: skip

    def gpu_result(self, timestamp_ms):
        return self.result(None, None, self.frame_size(), timestamp_ms, gpu=self.gpu)

    def destroy(self) -> None:
        super().destroy()
        p, t = self.projector, self.tracker
        for buf in (self.pre.roi, self.detection_roi.buffer, t.buffer, t.track, p.points,
                    p.args, p.status):  # fmt: skip
            buf.destroy()
        if self.geometry is not None:
            self.geometry.destroy()
