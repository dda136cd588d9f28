"""Solutions in the shape MediaPipe users know: `process(frame)` -> typed results.

    from engine.vision import FaceMesh
    with FaceMesh() as fm:
        res = fm.process(rgb)            # numpy RGB uint8 (H, W, 3), or a GPU texture
        res.faces[0].landmarks_px        # (468, 3) pixels; .landmarks normalised

One module per solution, named as MediaPipe's: face_detection (FaceDetector), face_mesh
(FaceMesh), selfie_segmentation (SelfieSegmenter), hands (Hands), pose (Pose), holistic
(Holistic). Each holds its declaration over the shared stages (engine/vision/detector.py,
detect_track.py, the backends), its result class, its per-frame FIELDS and record(); what
they share is base.py. engine/vision/registry.py lists them. Drawing is not here:
results are numbers, or GPU buffers with output="gpu".
"""

from engine.vision.solutions.face_detection import FaceDetector, FaceDetectorResult
from engine.vision.solutions.face_mesh import FaceLandmarks, FaceMesh, FaceMeshResult
from engine.vision.solutions.hands import HandLandmarks, Hands, HandsResult
from engine.vision.solutions.holistic import Holistic, HolisticResult
from engine.vision.solutions.pose import Pose, PoseResult
from engine.vision.solutions.selfie_segmentation import SegmentationResult, SelfieSegmenter

__all__ = [
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
    "SegmentationResult",
    "SelfieSegmenter",
]
