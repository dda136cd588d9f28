"""Solutions in the shape MediaPipe users know: `process(frame)` -> typed results.

    from engine.vision import FaceMesh
    with FaceMesh() as fm:
        res = fm.process(rgb)            # numpy RGB uint8 (H, W, 3), or a GPU texture
        res.faces[0].landmarks_px        # (468, 3) pixels; .landmarks normalised

- FaceDetector (face_detector.py), FaceMesh (face_mesh.py, tracking), SelfieSegmenter
  (selfie_segmenter.py), Hands (hands.py, tracking), Pose (pose.py,
  tracking, smoothing, mask), Holistic (holistic.py: pose, hands and face); shared behaviour in base.py; results in results.py; their per-frame fields (--results, engine-extract) in records.py
- drawing is not here (the app draws): results are numbers, or GPU buffers with
  output="gpu"
"""

from engine.vision.solutions.face_detector import FaceDetector
from engine.vision.solutions.face_mesh import FaceMesh, FaceMeshGpu
from engine.vision.solutions.hands import Hands
from engine.vision.solutions.holistic import Holistic, HolisticResult
from engine.vision.solutions.pose import Pose
from engine.vision.solutions.results import (
    Classification,
    Detection,
    FaceDetectorResult,
    FaceLandmarks,
    FaceMeshResult,
    HandLandmarks,
    HandsResult,
    PoseResult,
    SegmentationResult,
)
from engine.vision.solutions.selfie_segmenter import SelfieSegmenter

__all__ = [
    "Classification",
    "Detection",
    "FaceDetector",
    "FaceDetectorResult",
    "FaceLandmarks",
    "FaceMesh",
    "FaceMeshGpu",
    "FaceMeshResult",
    "HandLandmarks",
    "Hands",
    "HandsResult",
    "Holistic",
    "HolisticResult",
    "Pose",
    "PoseResult",
    "SegmentationResult",
    "SelfieSegmenter",
]
