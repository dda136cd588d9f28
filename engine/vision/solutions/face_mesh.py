"""FaceMesh: MediaPipe's face mesh solution on the engine (468 or 478 landmarks, tracked).

- input: frames (see base.py); face_detection_short_range + face_landmark by default,
  face_landmark_with_attention with refine_landmarks
- output: `FaceMeshResult`: each face's 468 landmarks (478 refined: lips, eyes, irises),
  in pixels and normalised, z, its presence score and ROI, and the detections when the
  detector ran
- options: static_image_mode / running_mode ("image": detect on every frame), max_num_faces
  (1), refine_landmarks (False), min_detection_confidence (0.5), min_tracking_confidence
  (0.5: the face flag's threshold), max_detections (16), and base.py's
- semantics: MediaPipe's face_landmark_front_cpu graph, the detect-then-track stage
  (engine/vision/detect_track.py): the detector runs while fewer than max_num_faces faces
  are tracked, each of its best max_num_faces detections -> a ROI (roi.FACE_MESH_ROI: the
  eyes' line upright, x1.5), associated with the tracked ROIs (a tracked face wins over a
  detection it overlaps); per ROI the crop (192x192, no letterbox, BORDER_REPLICATE,
  [0, 1]) -> face_landmark (a face is kept when sigmoid(flag) > min_tracking_confidence)
  -> landmarks projected back; each kept face's next ROI from its landmarks
  (tracking.roi_from_landmarks: the box of every landmark, eye corners 33 -> 263, x1.5)
- refine_landmarks: face_landmark_with_attention on the same crop; its seven outputs ->
  the 478 landmarks (engine/vision/face_refinement.py), projected as the 468, the next ROI
  from all 478. On xnnpack its MediaPipe custom ops run in numpy between LiteRT segments
  (engine/vision/backends/litert_segments.py)
- face_geometry: True (MediaPipe's environment: top-left origin, 63 degrees vertical FOV,
  near 1 cm, far 100 m) or an engine.vision.face_geometry.Environment: each face's
  `geometry` is its FaceGeometry (the metric mesh in cm, the 4x4 pose_transform_matrix,
  the environment), MediaPipe's FaceGeometryPipelineCalculator on its first 468 landmarks,
  in numpy on the landmarks read back (either backend; engine/vision/face_geometry.py);
  None without the option or with output="gpu" (nothing read back). With output="gpu"
  `gpu.geometry` holds each face's pose and metric mesh on the GPU: on webgpu's one-face
  GPU frame computed there (engine/vision/gpu_face_geometry.py, after the projection),
  otherwise computed in numpy and uploaded, every face's (max_num_faces > 1 is allowed
  then: every face's geometry, the first face's points)
- GPU: on webgpu one face (max_num_faces=1, not refined) is one GPU frame
  (gpu_frames.FaceMeshFrame: the ROI chosen on the GPU; `gpu` its buffers); otherwise the
  ROIs are decided on the CPU from what is read back, and with output="gpu" the one face's
  points are uploaded where the GPU frame would put them (engine/vision/uploads.py)
- usage:
    with FaceMesh() as fm:
        for i, rgb in enumerate(frames):
            res = fm.process(rgb, timestamp_ms=33 * i)
            if res.faces: print(res.faces[0].landmarks_px[1])   # the nose tip
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from engine.vision import records
from engine.vision.detect_track import CropModel, DetectTrack
from engine.vision.detector import DetectorModel
from engine.vision.face_geometry import (
    DEFAULT_ENVIRONMENT,
    Environment,
    FaceGeometry,
    face_geometry,
)
from engine.vision.face_refinement import NUM_LANDMARKS, check_outputs, refine_face_landmarks
from engine.vision.gpu_frames import FaceMeshFrame, FaceMeshGpu
from engine.vision.landmarks import crop_landmarks, landmark_outputs, project_to_frame
from engine.vision.results import Detection
from engine.vision.roi import FACE_MESH_ROI, Rect, roi_from_detection
from engine.vision.solutions.base import Solution, check_confidence, running_mode_of
from engine.vision.tracking import roi_from_landmarks
from engine.vision.uploads import FaceGeometryBuffers, FaceMeshBuffers

# face_detection_short_range.pbtxt; face_landmark_cpu.pbtxt: [0, 1], no border mode set
# (BORDER_UNSPECIFIED = replicate), the ROI as it is (no letterbox)
DETECTOR = DetectorModel("face_detection_short_range", (-1.0, 1.0), "zero")
LANDMARKS = {
    False: CropModel("face_landmark", (0.0, 1.0), "replicate", keep_aspect=False),
    True: CropModel("face_landmark_with_attention", (0.0, 1.0), "replicate", keep_aspect=False),
}  # refine_landmarks -> the crop model


@dataclass(frozen=True)
class FaceLandmarks:
    """468 landmarks of one face, in the order of MediaPipe's canonical face mesh; 478 with
    refine_landmarks (468-472 and 473-477: the irises, engine/vision/face_refinement.py)."""

    landmarks: np.ndarray  # (468 or 478, 3) normalised x / W, y / H, z / W (MediaPipe's)
    landmarks_px: np.ndarray  # (468 or 478, 3) pixels; z on x's scale, smaller = nearer
    presence: float  # the face flag (sigmoid), above min_tracking_confidence
    roi: Rect  # the crop the model saw (normalised, rotation in radians)
    tracked: bool  # True: the ROI came from the previous frame's landmarks
    geometry: FaceGeometry | None = None  # with face_geometry: the metric mesh and pose


@dataclass(frozen=True)
class FaceMeshResult:
    faces: tuple[FaceLandmarks, ...] | None  # empty: no face; None: output="gpu"
    detections: tuple[Detection, ...] | None  # None: the detector did not run (tracking)
    image_size: tuple[int, int]
    timestamp_ms: int | None = None
    gpu: object = None  # FaceMesh.gpu: points, status, ROI buffers
    backend: str = "webgpu"  # which ran the models: "webgpu" or "xnnpack"

    @property
    def multi_face_landmarks(self) -> list[np.ndarray]:
        """MediaPipe's name: the normalised (468 or 478, 3) landmarks of each face."""
        return [f.landmarks for f in self.faces or ()]


MESH = {"presence": records.F32, "tracked": records.BOOL, "roi": records.RECT,
        "landmarks_px": (records.F32, None, 3)}  # fmt: skip
FIELDS = {**records.FRAME, "faces": records.I32, "detector_ran": records.BOOL,
          "detections": [records.DETECTION], "meshes": [MESH]}  # fmt: skip


def record(res: FaceMeshResult) -> dict:
    return {"faces": len(res.faces), "detector_ran": res.detections is not None,
            "detections": records.detections(res.detections),
            "meshes": [{"presence": float(f.presence), "tracked": f.tracked,
                        "roi": records.rect(f.roi), "landmarks_px": f.landmarks_px}
                       for f in res.faces]}  # fmt: skip


def face_landmarks(out: dict, graph, input_size, refine: bool) -> tuple[np.ndarray, float]:
    """One crop's outputs -> (the landmarks in crop-normalised coordinates, presence: the
    sigmoid of the face flag): face_landmark's 468 or the attention model's 478."""
    lm_name, flag_name = landmark_outputs(graph)
    presence = 1.0 / (1.0 + math.exp(-float(out[flag_name].reshape(-1)[0])))
    if refine:
        names = [graph.tensors[t].name for t in graph.outputs]
        return refine_face_landmarks([out[n] for n in names]), presence
    return crop_landmarks(out[lm_name], input_size), presence


class FaceMesh(Solution):
    """MediaPipe's FaceMesh on the engine; see the module docstring."""

    def __init__(self, detector_model=None, landmark_model=None, *,
                 static_image_mode: bool | None = None, running_mode: str = "video",
                 max_num_faces: int = 1, refine_landmarks: bool = False,
                 min_detection_confidence: float = 0.5, min_tracking_confidence: float = 0.5,
                 max_detections: int = 16, face_geometry: bool | Environment = False,
                 **options):  # fmt: skip
        if max_num_faces < 1:
            raise ValueError(f"max_num_faces must be at least 1, not {max_num_faces}")
        check_confidence(min_detection_confidence=min_detection_confidence,
                         min_tracking_confidence=min_tracking_confidence)  # fmt: skip
        super().__init__(running_mode=running_mode_of(static_image_mode, running_mode),
                         **options)  # fmt: skip
        self.refine = bool(refine_landmarks)
        self.environment = (face_geometry if isinstance(face_geometry, Environment)
                            else DEFAULT_ENVIRONMENT if face_geometry else None)  # fmt: skip
        if max_num_faces > 1 and self.output != "numpy" and self.environment is None:
            raise ValueError("output='gpu' draws one tracked face: max_num_faces=1 (with "
                             "face_geometry: every face's geometry, the first one's points)")  # fmt: skip
        self.max_num_faces, self.min_tracking_confidence = max_num_faces, min_tracking_confidence
        crop = LANDMARKS[self.refine]
        detector = self.backend.model("detection", detector_model, DETECTOR.model)
        lm = self.lm_engine = self.backend.model("landmarks", landmark_model, crop.model)
        if self.refine:
            check_outputs([math.prod(lm.graph.tensors[t].shape) for t in lm.graph.outputs])
        self.stage = DetectTrack(
            self.backend, DETECTOR, detector, crop, lm, max_objects=max_num_faces,
            min_score=min_detection_confidence, max_detections=max_detections,
            roi_from_detection=lambda d, size: roi_from_detection(d.box, d.keypoints, size,
                                                                  FACE_MESH_ROI),
            decode=self._face, tracking=self.tracking,
            next_roi=lambda face: roi_from_landmarks(face.landmarks_px, self.frame_size),
        )  # fmt: skip
        if max_num_faces == 1 and not self.refine:  # one face: the ROI chosen on the GPU
            self.program = self.backend.gpu_stage(lambda: FaceMeshFrame(
                self.backend, self.stage.detector, lm, crop, min_tracking_confidence,
                self.tracking, self.output, FaceMeshResult, FaceLandmarks,
                lambda: self.frame_size, self.environment))  # fmt: skip
        self.uploads = None  # the CPU-decided path with output="gpu": the face uploaded
        self.geometry_uploads = None  # ... and every face's geometry
        if self.program is None and self.output == "gpu":
            g = lm.graph
            points = NUM_LANDMARKS if self.refine else math.prod(g.tensors[g.outputs[0]].shape) // 3
            self.uploads = FaceMeshBuffers(self.device, points,
                                           self.stage.detector.spec.num_keypoints,
                                           max_detections)  # fmt: skip
            if self.environment is not None:
                self.geometry_uploads = FaceGeometryBuffers(self.device, max_num_faces)

    @classmethod
    def models(cls, refine_landmarks: bool = False, **_) -> tuple[str, ...]:
        """The manifest's models these options run."""
        return (DETECTOR.model, LANDMARKS[bool(refine_landmarks)].model)

    @property
    def gpu(self) -> FaceMeshGpu:
        if self.program is not None:
            return self.program.gpu
        u, g = self.uploads, self.geometry_uploads
        return FaceMeshGpu(u.points, u.num_points, u.norm_offset, u.status, u.args, u.roi,
                           u.detections, g.gpu if g is not None else None)  # fmt: skip

    def reset(self) -> None:
        """Forget the tracked faces and the last timestamp (a new video): the next frame
        runs the detector."""
        self._forget()
        self._last_ts = None

    def _forget(self) -> None:
        self.stage.reset()
        if self.program is not None:
            self.program.reset()

    def _configure(self, frame_size) -> None:
        self.stage.configure(frame_size)
        self._forget()  # another frame size: the tracked ROIs mean nothing

    def process(self, frame, timestamp_ms: int | None = None) -> FaceMeshResult:
        self._last_result = self._with_geometry(super().process(frame, timestamp_ms))
        if self.geometry_uploads is not None:  # the CPU-decided path's faces: all of them
            self.geometry_uploads.write(self._last_result.faces)
        return self._last_result

    def read(self, timestamp_ms: int | None = None) -> FaceMeshResult:
        res = super().read(timestamp_ms)  # the CPU-decided path's: process() added it
        return res if self.program is None else self._with_geometry(res)

    def _with_geometry(self, res: FaceMeshResult) -> FaceMeshResult:
        """Each face with its geometry, when asked for (both paths' results pass here)."""
        if self.environment is None or not res.faces:
            return res
        faces = tuple(replace(f, geometry=face_geometry(f.landmarks, res.image_size,
                                                        self.environment))
                      for f in res.faces)  # fmt: skip
        return replace(res, faces=faces)

    def track(self, frame, timestamp_ms) -> FaceMeshResult:
        faces, detections = self.stage.track(frame, self.frame_size)
        if self.uploads is not None:
            self.uploads.write(faces[0] if faces else None, detections, self.frame_size)
        return FaceMeshResult(tuple(faces), detections, self.frame_size, timestamp_ms,
                              gpu=self.gpu if self.uploads is not None else None)  # fmt: skip

    def _face(self, out, padding, rect: Rect, tracked: bool) -> FaceLandmarks | None:
        crop, presence = face_landmarks(out, self.lm_engine.graph, self.stage.crops.size,
                                        self.refine)  # fmt: skip
        if not presence > self.min_tracking_confidence:  # ThresholdingCalculator: strict
            return None
        lm = project_to_frame(crop, rect)
        fw, fh = self.frame_size
        return FaceLandmarks(landmarks=lm, landmarks_px=lm * (fw, fh, fw), presence=presence,
                             roi=rect, tracked=tracked)  # fmt: skip

    def _uploads(self) -> list:
        return [u for u in (self.uploads, self.geometry_uploads) if u is not None]
