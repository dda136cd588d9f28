"""GPU post-processing stages for the live path (no tensor leaves the GPU).

- `SsdDecoder` (detections.py): SSD anchor decode + weighted NMS -> detection records,
  DrawIndirect args, count;
- `DetectionRoi` (roi.py): the best detection -> MediaPipe's rotated square ROI, written as
  the next model's pre-process affine; `roi_from_detection` + `rect_matrix` are its numpy
  oracle;
- `LandmarkProjector` (landmarks.py): landmark tensor + presence flag -> frame-space points
  (a vertex buffer) + DrawIndirect args; `project_landmarks` is its numpy oracle.

Each stage's `encode(encoder)` records into a caller's command encoder; `read()` is for
tests and debugging only.
"""

from engine.vision.detections import DetectionRecord, GpuDetections, SsdDecoder
from engine.vision.landmarks import GpuLandmarks, LandmarkProjector, project_landmarks
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

__all__ = [
    "FACE_MESH_ROI",
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
