"""What the solutions return: frozen dataclasses of numpy arrays, plus GPU handles.

Coordinates come twice: in frame pixels (`*_px`) and normalised by the frame size
(x / width, y / height; MediaPipe's convention, z / width for landmarks). Boxes are
(xmin, ymin, xmax, ymax). With `output="gpu"` the numpy fields are None and `gpu` holds the
buffers the results live in (valid until the next `process()` is submitted). `backend` says
which backend ran the models (engine/vision/backend.py).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.vision.roi import Rect


@dataclass(frozen=True)
class Detection:
    """One face: score, box and keypoints (right eye, left eye, nose tip, mouth centre,
    right ear tragion, left ear tragion: the subject's right and left)."""

    score: float
    box: np.ndarray  # (4,) normalised xmin, ymin, xmax, ymax
    box_px: np.ndarray  # (4,) pixels
    keypoints: np.ndarray  # (K, 2) normalised
    keypoints_px: np.ndarray  # (K, 2) pixels

    @property
    def width_px(self) -> float:
        return float(self.box_px[2] - self.box_px[0])

    @property
    def height_px(self) -> float:
        return float(self.box_px[3] - self.box_px[1])


@dataclass(frozen=True)
class FaceDetectorResult:
    detections: tuple[Detection, ...] | None  # highest score first; None: output="gpu"
    image_size: tuple[int, int]  # (width, height)
    timestamp_ms: int | None = None
    gpu: object = None  # FaceDetector.gpu: the records, count and draw args on the GPU
    backend: str = "webgpu"  # which ran the models: "webgpu" or "xnnpack"


@dataclass(frozen=True)
class FaceLandmarks:
    """468 landmarks of one face, in the order of MediaPipe's canonical face mesh; 478 with
    refine_landmarks (468-472 and 473-477: the irises, engine/vision/face_refinement.py)."""

    landmarks: np.ndarray  # (468 or 478, 3) normalised x / W, y / H, z / W (MediaPipe's)
    landmarks_px: np.ndarray  # (468 or 478, 3) pixels; z on x's scale, smaller = nearer
    presence: float  # the face flag (sigmoid), above min_tracking_confidence
    roi: Rect  # the crop the model saw (normalised, rotation in radians)
    tracked: bool  # True: the ROI came from the previous frame's landmarks


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


@dataclass(frozen=True)
class SegmentationResult:
    mask: np.ndarray | None  # (H, W) float32 person probability at the frame's size
    image_size: tuple[int, int]
    timestamp_ms: int | None = None
    gpu: object = None  # SelfieSegmenter.gpu: the model-resolution mask on the GPU
    backend: str = "webgpu"  # which ran the models: "webgpu" or "xnnpack"

    @property
    def segmentation_mask(self) -> np.ndarray | None:
        """MediaPipe's name for `mask`."""
        return self.mask


@dataclass(frozen=True)
class Classification:
    """MediaPipe's Classification: a class index, its score and its label."""

    index: int
    score: float
    label: str


@dataclass(frozen=True)
class HandLandmarks:
    """21 landmarks of one hand (wrist, thumb CMC..tip, index MCP..tip, ... pinky tip)."""

    landmarks: np.ndarray  # (21, 3) normalised x / W, y / H; z relative, on x's scale
    landmarks_px: np.ndarray  # (21, 3) pixels (z * W)
    world_landmarks: np.ndarray  # (21, 3) metres, origin near the hand's centre
    handedness: Classification  # "Left" / "Right" as the model says (a mirrored image's)
    presence: float  # the hand flag, above min_tracking_confidence
    roi: Rect  # the crop the model saw (normalised, rotation in radians)
    tracked: bool  # True: the ROI came from the previous frame's landmarks


@dataclass(frozen=True)
class HandsResult:
    hands: tuple[HandLandmarks, ...] | None  # MediaPipe's order; empty: no hand
    palm_detections: tuple[Detection, ...] | None  # None: the palm detector did not run
    image_size: tuple[int, int]
    timestamp_ms: int | None = None
    gpu: object = None
    backend: str = "webgpu"  # which ran the models: "webgpu" or "xnnpack"

    @property
    def multi_hand_landmarks(self) -> list[np.ndarray] | None:
        """MediaPipe's name: each hand's normalised (21, 3) landmarks; None: no hand."""
        return [h.landmarks for h in self.hands] if self.hands else None

    @property
    def multi_hand_world_landmarks(self) -> list[np.ndarray] | None:
        return [h.world_landmarks for h in self.hands] if self.hands else None

    @property
    def multi_handedness(self) -> list[Classification] | None:
        return [h.handedness for h in self.hands] if self.hands else None


@dataclass(frozen=True)
class PoseResult:
    """One body's 33 landmarks (MediaPipe's BlazePose topology) and its mask; the
    landmark fields are None when no pose was found."""

    landmarks: np.ndarray | None  # (33, 3) normalised x / W, y / H; z on x's scale
    landmarks_px: np.ndarray | None  # (33, 3) pixels
    visibility: np.ndarray | None  # (33,) smoothed, as MediaPipe's landmark.visibility
    presence: np.ndarray | None  # (33,) (MediaPipe's Python API drops it)
    world_landmarks: np.ndarray | None  # (33, 3) metres, origin between the hips
    mask: np.ndarray | None  # (H, W) float32 person probability (enable_segmentation)
    roi: Rect | None  # the crop the landmark model saw
    tracked: bool  # True: the ROI came from the previous frame's landmarks
    detections: tuple[Detection, ...] | None  # None: the detector did not run
    image_size: tuple[int, int]
    timestamp_ms: int | None = None
    gpu: object = None
    backend: str = "webgpu"  # which ran the models: "webgpu" or "xnnpack"

    @property
    def pose_landmarks(self) -> np.ndarray | None:
        """MediaPipe's name: the normalised (33, 3) landmarks (visibility apart)."""
        return self.landmarks

    @property
    def pose_world_landmarks(self) -> np.ndarray | None:
        return self.world_landmarks

    @property
    def segmentation_mask(self) -> np.ndarray | None:
        return self.mask
