"""FaceMesh: MediaPipe's face mesh solution on the engine (468 or 478 landmarks, tracked).

- input: frames (see base.py); face_detection_short_range + face_landmark by default,
  face_landmark_with_attention with refine_landmarks
- output: `FaceMeshResult`: each face's 468 landmarks (478 refined: lips, eyes, irises),
  in pixels and normalised, z, its presence score and ROI, and the detections when the
  detector ran
- options: static_image_mode / running_mode ("image": detect on every frame), max_num_faces
  (1; more: the CPU-decided path below), refine_landmarks (False; True: the attention
  model, on the CPU-decided path below whatever max_num_faces), min_detection_confidence
  (0.5), min_tracking_confidence (0.5: the face flag's threshold), and base.py's
- semantics: MediaPipe's face_landmark_front_cpu graph, one face: the ROI is the previous
  frame's landmarks' (engine/vision/tracking.py) while the face flag holds, else the
  detector's best detection's (engine/vision/roi.py); the crop (BORDER_REPLICATE, [0, 1])
  -> face_landmark -> landmarks projected back (engine/vision/landmarks.py)
- GPU: `process()` reads the face flag back each frame and skips the detector while
  tracking, as MediaPipe; `steps()` (GPU-resident, nothing read back) records the detector
  every frame and lets the GPU choose the ROI (the same results, the detector's cost kept)
- several faces (max_num_faces > 1): face_landmark_front_cpu's multi-face loop, as Hands
  does it: the detector runs while fewer than max_num_faces faces are tracked, its best
  max_num_faces detections' ROIs and the tracked ROIs are associated (a tracked face wins
  over a detection it overlaps), face_landmark runs on every ROI in one submit
  (engine/vision/roi_model.py), each kept face's next ROI comes from its landmarks; the
  ROIs are decided on the CPU from what is read back, so `steps()` / output="gpu" are for
  one face only
- refine_landmarks: face_landmark_with_attention on the same CPU-decided path (its crop as
  face_landmark's: 192x192, no letterbox, replicate, [0, 1]; its flag as the threshold);
  its seven outputs -> the 478 landmarks (engine/vision/face_refinement.py), projected as
  the 468; the next ROI from all 478 (irises in the box, the refined eye corners 33 and
  263 for the rotation); `steps()` / output="gpu" run process() and upload the one
  face's 478 points where the GPU stages would put theirs (as the xnnpack backend does).
  On webgpu only: backend "auto" picks webgpu for it whatever the adapter (the results'
  `backend` says so), "xnnpack" is a ModelError (LiteRT has no kernel for the model's
  custom ops)
- usage:
    with FaceMesh() as fm:
        for i, rgb in enumerate(frames):
            res = fm.process(rgb, timestamp_ms=33 * i)
            if res.faces: print(res.faces[0].landmarks_px[1])   # the nose tip
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from engine.vision.backend import webgpu_only
from engine.vision.face_refinement import NUM_LANDMARKS, check_outputs, refine_face_landmarks
from engine.vision.landmarks import (
    LandmarkProjector,
    crop_landmarks,
    landmark_outputs,
    project_to_frame,
)
from engine.vision.preprocess import Preprocessor
from engine.vision.roi import FACE_MESH_ROI, DetectionRoi, Rect, roi_from_detection
from engine.vision.solutions.base import Solution, Step
from engine.vision.solutions.cpu_upload import FaceMeshBuffers
from engine.vision.solutions.face_detector import (
    DETECTOR_MODEL,
    detector_spec,
    detector_stages,
    input_name,
)
from engine.vision.solutions.results import FaceLandmarks, FaceMeshResult
from engine.vision.tracking import RoiTracker, associate_rects, roi_from_landmarks

LANDMARK_MODELS = {False: "face_landmark", True: "face_landmark_with_attention"}  # refine
VALUE_RANGE = (0.0, 1.0)  # face_landmark_cpu.pbtxt: output_tensor_float_range
BORDER = "replicate"  # face_landmark_cpu.pbtxt sets none: BORDER_UNSPECIFIED = replicate


@dataclass(frozen=True)
class FaceMeshGpu:
    """Where a frame's face mesh lives on the GPU (valid until the next frame is submitted).

    points: LandmarkProjector.points, vec4 (x, y, z, 1) per landmark in frame pixels, then
    at byte `norm_offset` the same normalised; status: f32 (presence, present, ROI valid, 0);
    args: DrawIndirect (6, 468 or 0, 0, 0); roi: the chosen ROI's 96-byte record
    (shaders/engine/roi_rect.wgsl); detections: the SsdDecoder of the detector."""

    points: object
    num_points: int
    norm_offset: int
    status: object
    args: object
    roi: object
    detections: object


class FaceMesh(Solution):
    """MediaPipe's FaceMesh on the engine; see the module docstring."""

    def __init__(self, detector_model=None, landmark_model=None, *,
                 static_image_mode: bool | None = None, running_mode: str = "video",
                 max_num_faces: int = 1, refine_landmarks: bool = False,
                 min_detection_confidence: float = 0.5, min_tracking_confidence: float = 0.5,
                 max_detections: int = 16, **options):  # fmt: skip
        if max_num_faces < 1:
            raise ValueError(f"max_num_faces must be at least 1, not {max_num_faces}")
        if refine_landmarks:  # its model's custom ops run on webgpu only
            options["backend"] = webgpu_only(options.get("backend", "auto"), "refine_landmarks")
        if static_image_mode is not None:
            running_mode = "image" if static_image_mode else "video"
        super().__init__(running_mode=running_mode, **options)
        det_engine = self._engine("detection", detector_model, DETECTOR_MODEL)
        spec = detector_spec(detector_model or DETECTOR_MODEL + ".tflite", det_engine,
                             min_detection_confidence)  # fmt: skip
        self.detector = detector_stages(self, det_engine, spec, max_detections)
        self.refine = bool(refine_landmarks)
        lm = self.lm_engine = self._engine("landmarks", landmark_model,
                                           LANDMARK_MODELS[self.refine])  # fmt: skip
        self.tracking = self.running_mode == "video"
        self._present = False  # the last frame read back had a face: skip the detector
        self._ran_detector = True
        if self.backend == "webgpu":
            self._gpu_stages(lm, min_tracking_confidence)
        self.max_num_faces, self.min_tracking_confidence = max_num_faces, min_tracking_confidence
        self.crops = self.uploaded = None
        # several faces, refined landmarks and xnnpack: the ROIs are decided on the CPU
        if max_num_faces > 1 or self.refine or self.backend == "xnnpack":
            if max_num_faces > 1 and self.output != "numpy":
                raise ValueError("output='gpu' draws one tracked face: max_num_faces=1")
            self.crops = self._roi_model(lm, VALUE_RANGE, BORDER, keep_aspect=False)
            self.lm_names = landmark_outputs(lm)
            if self.refine:
                check_outputs([math.prod(o.shape) for o in self.crops.outputs])
        # the ROIs decided on the CPU and output="gpu": the results are uploaded where the
        # GPU stages would have put them (the app draws from there)
        if self.crops is not None and self.output == "gpu":
            g = lm.graph
            num_points = NUM_LANDMARKS if self.refine else (
                int(np.prod(g.tensors[g.outputs[0]].shape)) // 3)  # fmt: skip
            self.uploaded = FaceMeshBuffers(self.device, num_points, spec.num_keypoints,
                                            max_detections)  # fmt: skip
        self._tracked: list[Rect] = []  # several faces: the next frame's ROIs

    def _gpu_stages(self, lm, min_tracking_confidence: float) -> None:
        """One face on the GPU: the detection ROI, the tracker, the landmark projection."""
        self.lm_pre = Preprocessor(lm, input_name(lm), VALUE_RANGE, border=BORDER)
        self.detection_roi = DetectionRoi(self.detector.decoder)
        self.tracker = RoiTracker(self.detection_roi, self.lm_pre)
        self.projector = LandmarkProjector(lm, self.tracker, threshold=min_tracking_confidence,
                                           input_name=input_name(lm))  # fmt: skip
        self.tracker.attach(self.projector)
        p = self.projector
        self.readback.add("status", p.status, 0, 16)
        self.readback.add("points", p.points)
        self.readback.add("roi", self.tracker.buffer)
        self.detector.add_readback(self.readback)

    @property
    def gpu(self) -> FaceMeshGpu:
        if self.uploaded is not None:
            u = self.uploaded
            return FaceMeshGpu(u.points, u.num_points, u.norm_offset, u.status, u.args, u.roi,
                               u.detections)  # fmt: skip
        p = self.projector
        return FaceMeshGpu(p.points, p.num_points, p.norm_offset, p.status, p.args,
                           self.tracker.buffer, self.detector.decoder)  # fmt: skip

    def reset(self) -> None:
        """Forget the tracked face and the last timestamp (a new video): the next frame
        runs the detector."""
        self._forget()
        self._last_ts = None

    def _forget(self) -> None:
        if self.backend == "webgpu":
            self.tracker.reset()
        self._present = False
        self._tracked = []

    def _configure(self, frame_size) -> None:
        self.detector.configure(frame_size)
        self._forget()  # another frame size: the tracked ROI means nothing

    def steps(self, frame_view) -> list[Step]:
        if self.crops is not None:  # xnnpack, refined: process(), then the upload
            return self._cpu_steps(frame_view)
        return self.detector.steps(frame_view) + self._landmark_steps(frame_view)

    def _frame_steps(self, view) -> list[Step]:
        self._ran_detector = not (self.tracking and self._present and self.output == "numpy")
        if not self._ran_detector:
            return self._landmark_steps(view)
        return self.steps(view)

    def _landmark_steps(self, view) -> list[Step]:
        def project(enc) -> None:
            self.projector.encode(enc)
            if self.tracking:
                self.tracker.encode_update(enc)

        def detection_roi(enc) -> None:
            self.detection_roi.encode(enc)
            self.tracker.encode_select(enc)

        return [
            ("postprocess", detection_roi),
            ("preprocess", lambda enc: self.lm_pre.encode(enc, view)),
            ("inference", self.lm_engine.encode),
            ("postprocess", project),
        ]

    # --- several faces, refined landmarks: ROIs decided on the CPU ----------------------
    def _process(self, frame, timestamp_ms):
        if self.crops is None:
            return super()._process(frame, timestamp_ms)
        view, size = self.frames(frame)
        self.prepare(size)
        tracked = self._tracked if self.tracking else []
        detections, detected_rects = None, []
        if len(tracked) < self.max_num_faces:
            detections = self._detect(view)
            detected_rects = [roi_from_detection(d.box, d.keypoints, size, FACE_MESH_ROI)
                              for d in detections[: self.max_num_faces]]  # fmt: skip
        rois = associate_rects(detected_rects, tracked)
        faces = []
        for (stream, rect), (out, _) in zip(rois, self.crops.run(view, size, [r for _, r in rois]),
                                            strict=True):  # fmt: skip
            face = self._face_from(out, rect, size, tracked=stream == 1)
            if face is not None:
                faces.append(face)
        if self.tracking:
            self._tracked = [roi_from_landmarks(f.landmarks_px, size) for f in faces]
        if self.uploaded is not None:
            self.uploaded.write(faces[0] if faces else None, detections, size)
        return FaceMeshResult(tuple(faces), detections, size, timestamp_ms, gpu=self.uploaded)

    def _detect(self, view):
        return self.detector.detect(view, self.readback)

    def _face_from(self, out, rect: Rect, size, tracked: bool) -> FaceLandmarks | None:
        lm_name, flag_name = self.lm_names
        presence = 1.0 / (1.0 + math.exp(-float(out[flag_name].reshape(-1)[0])))
        if not presence > self.min_tracking_confidence:  # ThresholdingCalculator: strict
            return None
        if self.refine:
            crop = refine_face_landmarks([out[o.name] for o in self.crops.outputs])
        else:
            crop = crop_landmarks(out[lm_name], self.crops.size)
        lm = project_to_frame(crop, rect)
        fw, fh = size
        return FaceLandmarks(landmarks=lm, landmarks_px=lm * (fw, fh, fw), presence=presence,
                             roi=rect, tracked=tracked)  # fmt: skip

    @property
    def readback_maps(self) -> int:
        return self.readback.maps + (self.crops.readback.maps if self.crops else 0)

    def _encode_readback(self, encoder) -> None:
        names = None if self._ran_detector else ("status", "points", "roi")
        self.readback.encode(encoder, names)

    def _result(self, data, timestamp_ms) -> FaceMeshResult:
        status = np.frombuffer(data["status"], np.float32)
        present = bool(status[1] > 0.5)
        if self.tracking and self.output == "numpy":
            self._present = present
        faces = ()
        if present:
            faces = (self._face(data, float(status[0])),)
        detections = self.detector.parse(data) if self._ran_detector else None
        return FaceMeshResult(faces, detections, self.frame_size, timestamp_ms)

    def _face(self, data, presence: float) -> FaceLandmarks:
        n, off = self.projector.num_points, self.projector.norm_offset // 16
        pts = np.frombuffer(data["points"], np.float32).reshape(-1, 4).astype(np.float64)
        roi = np.frombuffer(data["roi"], np.float32).reshape(6, 4).astype(np.float64)
        fw, fh = self.frame_size
        (cx, cy, w, h), rotation = roi[4], roi[5, 0]
        rect = Rect(cx / fw, cy / fh, w / fw, h / fh, float(rotation))
        return FaceLandmarks(
            landmarks=pts[off : off + n, :3].copy(), landmarks_px=pts[:n, :3].copy(),
            presence=presence, roi=rect, tracked=bool(roi[0, 3] > 0.5),
        )  # fmt: skip

    def _gpu_result(self, timestamp_ms) -> FaceMeshResult:
        return FaceMeshResult(None, None, self.frame_size, timestamp_ms, gpu=self.gpu)

    def close(self) -> None:
        if not self._closed and self.crops is not None:
            self.crops.destroy()
        super().close()

    def _uploaders(self) -> list:
        u = self.uploaded
        return [u, u.detections] if u is not None else []

    def _owned_buffers(self) -> list:
        uploaded = self.uploaded.buffers() if self.uploaded is not None else []
        if self.backend == "xnnpack":
            return uploaded
        p, t = self.projector, self.tracker
        crops = self.crops.owned_buffers() if self.crops is not None else []
        return [*self.detector.owned_buffers(), self.lm_pre.roi, self.detection_roi.buffer,
                t.buffer, t.track, p.points, p.args, p.status, *crops, *uploaded]  # fmt: skip
