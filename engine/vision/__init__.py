"""Vision on the engine: MediaPipe-style solutions and the GPU stages they are made of.

Solutions (engine/vision/solutions/): `FaceDetector`, `FaceMesh` (tracking),
`SelfieSegmenter`: `process(frame)` -> typed results (docs/vision.md).

Stages, each usable alone (no tensor leaves the GPU):
- `Preprocessor` (preprocess.py): frame texture -> model input, MediaPipe's
  ImageToTensorCalculator exactly (image_to_tensor.py is its numpy twin and the
  convention's definition);

- `SsdDecoder` (detections.py): SSD anchor decode + weighted NMS -> detection records,
  DrawIndirect args, count;
- `DetectionRoi` (roi.py): the best detection -> MediaPipe's rotated square ROI, written as
  the next model's pre-process affine; `roi_from_detection` + `rect_matrix` are its numpy
  oracle;
- `LandmarkProjector` (landmarks.py): landmark tensor + presence flag -> frame-space points
  (a vertex buffer) + DrawIndirect args; `project_landmarks` is its numpy oracle;
- `RoiTracker` (tracking.py): the face-mesh loop: the next ROI from the landmarks;
  `roi_from_landmarks` is its numpy oracle.

Each stage's `encode(encoder)` records into a caller's command encoder; `read()` is for
tests and debugging only.
"""

from engine.vision.detections import DetectionRecord, GpuDetections, SsdDecoder
from engine.vision.landmarks import GpuLandmarks, LandmarkProjector, project_landmarks
from engine.vision.preprocess import Preprocessor
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
    Classification,
    Detection,
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
from engine.vision.tracking import RoiTracker, roi_from_landmarks

__all__ = [
    "FACE_MESH_ROI",
    "Classification",
    "Detection",
    "FaceDetector",
    "FaceDetectorResult",
    "FaceLandmarks",
    "FaceMesh",
    "FaceMeshResult",
    "HandLandmarks",
    "Hands",
    "HandsResult",
    "Holistic",
    "HolisticResult",
    "Pose",
    "PoseResult",
    "Preprocessor",
    "RoiTracker",
    "SegmentationResult",
    "SelfieSegmenter",
    "roi_from_landmarks",
    "DetectionRecord",
    "DetectionRoi",
    "GpuDetections",
    "GpuLandmarks",
    "GpuRoi",
    "LandmarkProjector",
    "Rect",
    "RoiOptions",
    "SsdDecoder",
    "invert_affine",
    "normalize_radians",
    "project_landmarks",
    "rect_matrix",
    "roi_from_detection",
]
