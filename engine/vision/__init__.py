"""Vision on the engine: MediaPipe's solutions and the stages they are made of.

Solutions (engine/vision/solutions/, listed in registry.py): `FaceDetector`, `FaceMesh`
(several faces, irises), `SelfieSegmenter`, `Hands`, `Pose`, `Holistic`:
`process(frame)` -> typed results under MediaPipe's names (docs/vision.md). Each is a
declaration over shared stages, on a backend chosen once (backends/: webgpu, xnnpack).

Tables: `SOLUTIONS` (registry.py: every solution once), `BACKENDS` (backends/), the
connection sets (connections.py). Per-frame records: `frame_record`, `fields_of`
(records.py).

Stages:
- `detector.py`: an SSD detector on the frame or a crop -> detections (GPU and CPU
  implementations in backends/);
- `detect_track.py`: detect when untracked, crop, decode, the next ROI (FaceMesh, Hands,
  Pose, Holistic's pose);
- on the GPU, each recording into a caller's encoder (`encode(encoder)`; `read()` is for
  tests and debugging): `Preprocessor` (preprocess.py: frame texture -> model input,
  MediaPipe's ImageToTensorCalculator exactly; image_to_tensor.py is its numpy twin and
  the convention's definition), `SsdDecoder` (detections.py: anchor decode + weighted
  NMS), `DetectionRoi` (roi.py: the best detection -> the rotated square ROI),
  `LandmarkProjector` (landmarks.py), `RoiTracker` (tracking.py: the face-mesh loop's next
  ROI from the landmarks); the numpy functions beside them are their oracles;
- gpu_frames.py: the solutions' frames wholly on the GPU (face detection, one tracked
  face, segmentation): on webgpu nothing but a small result leaves the GPU, and with
  output="gpu" nothing at all; gpu_face_geometry.py: FaceMesh's face geometry there
  (`FaceGeometryGpu`: each face's pose and metric mesh; `Environment` and
  `canonical_face`: the virtual camera and the canonical face a renderer draws with).
"""

from pathlib import Path

from engine.gpu import register_shaders, shader_loader
from engine.vision.backends import BACKENDS
from engine.vision.backends import CHOICES as BACKEND_CHOICES
from engine.vision.connections import (
    FACEMESH_CONTOURS,
    FACEMESH_IRISES,
    FACEMESH_TESSELATION,
    HAND_CONNECTIONS,
    POSE_CONNECTIONS,
)
from engine.vision.detections import DetectionRecord, GpuDetections, SsdDecoder
from engine.vision.face_geometry import Environment, canonical_face
from engine.vision.face_refinement import is_attention_model
from engine.vision.gpu_face_geometry import FaceGeometryGpu
from engine.vision.landmarks import GpuLandmarks, LandmarkProjector, project_landmarks
from engine.vision.preprocess import Preprocessor
from engine.vision.read_ahead import ReadAhead
from engine.vision.records import fields_of, frame_record
from engine.vision.registry import SOLUTIONS
from engine.vision.results import Classification, Detection
from engine.vision.roi import (
    FACE_MESH_ROI,
    DetectionRoi,
    GpuRoi,
    Rect,
    RoiOptions,
    invert_affine,
    normalize_radians,
    rect_matrix,
    roi_from_detection,
)
from engine.vision.solutions import (
    FaceDetector,
    FaceDetectorResult,
    FaceLandmarks,
    FaceMesh,
    FaceMeshResult,
    HandLandmarks,
    Hands,
    HandsResult,
    Holistic,
    HolisticResult,
    Pose,
    PoseResult,
    SegmentationResult,
    SelfieSegmenter,
)
from engine.vision.ssd import KEYPOINT_NAMES, Detections, detect_faces, letterbox
from engine.vision.tracking import RoiTracker, roi_from_landmarks

__all__ = [
    "BACKENDS",
    "BACKEND_CHOICES",
    "FACEMESH_CONTOURS",
    "FACEMESH_IRISES",
    "FACEMESH_TESSELATION",
    "FACE_MESH_ROI",
    "HAND_CONNECTIONS",
    "KEYPOINT_NAMES",
    "POSE_CONNECTIONS",
    "SOLUTIONS",
    "Detections",
    "ReadAhead",
    "canonical_face",
    "detect_faces",
    "fields_of",
    "frame_record",
    "is_attention_model",
    "letterbox",
    "Classification",
    "Detection",
    "DetectionRecord",
    "DetectionRoi",
    "Environment",
    "FaceDetector",
    "FaceDetectorResult",
    "FaceGeometryGpu",
    "FaceLandmarks",
    "FaceMesh",
    "FaceMeshResult",
    "GpuDetections",
    "GpuLandmarks",
    "GpuRoi",
    "HandLandmarks",
    "Hands",
    "HandsResult",
    "Holistic",
    "HolisticResult",
    "LandmarkProjector",
    "Pose",
    "PoseResult",
    "Preprocessor",
    "Rect",
    "RoiOptions",
    "RoiTracker",
    "SegmentationResult",
    "SelfieSegmenter",
    "SsdDecoder",
    "invert_affine",
    "normalize_radians",
    "project_landmarks",
    "rect_matrix",
    "roi_from_detection",
    "roi_from_landmarks",
]

# the "vision/" shader namespace: shaders/vision in a source checkout, the package's
# engine/vision/shaders in a wheel (the stages' templates that are no engine kernel: editing
# them changes no kernel fingerprint, engine/latency/predictors/base.py)
_SOURCE_SHADERS = Path(__file__).resolve().parents[2] / "shaders" / "vision"
register_shaders("vision", shader_loader("engine.vision", _SOURCE_SHADERS))
