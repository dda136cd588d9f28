"""MediaPipe Objectron (mp.solutions.objectron): its names, and no solution.

- what: BoxLandmark, BOX_CONNECTIONS, the model descriptions (ObjectronModel, ShoeModel,
  ChairModel, CupModel, CameraModel), get_model_by_name, ObjectronOutputs and Objectron,
  with MediaPipe's signatures and values
- semantics: Objectron's models (object_detection_ssd_mobilenetv2_oidv4_fp16.tflite and
  object_detection_3d_*.tflite, which mediapipe downloads from its GitHub repository when
  the solution is made) are in no registry this project fetches from, so constructing
  Objectron is a ModelError naming them; get_model_by_name checks the name (ValueError, as
  MediaPipe) and downloads nothing. The model classes are mutable dataclasses (MediaPipe's
  are attrs classes, the four named ones frozen)
"""

from __future__ import annotations

import dataclasses

import numpy as np

from engine.errors import ModelError as _ModelError
from engine.vision.connections import BOX_CONNECTIONS, BoxLandmark
from engine.vision.mediapipe.solution_base import SolutionBase

__all__ = [
    "BOX_CONNECTIONS",
    "BoxLandmark",
    "CameraModel",
    "ChairModel",
    "CupModel",
    "Objectron",
    "ObjectronModel",
    "ObjectronOutputs",
    "ShoeModel",
    "SolutionBase",
    "get_model_by_name",
]

_DETECTOR = "mediapipe/modules/objectron/object_detection_ssd_mobilenetv2_oidv4_fp16.tflite"


@dataclasses.dataclass
class ObjectronModel:
    model_path: str
    label_name: str


@dataclasses.dataclass
class ShoeModel(ObjectronModel):
    model_path: str = "mediapipe/modules/objectron/object_detection_3d_sneakers.tflite"
    label_name: str = "Footwear"


@dataclasses.dataclass
class ChairModel(ObjectronModel):
    model_path: str = "mediapipe/modules/objectron/object_detection_3d_chair.tflite"
    label_name: str = "Chair"


@dataclasses.dataclass
class CameraModel(ObjectronModel):
    model_path: str = "mediapipe/modules/objectron/object_detection_3d_camera.tflite"
    label_name: str = "Camera"


@dataclasses.dataclass
class CupModel(ObjectronModel):
    model_path: str = "mediapipe/modules/objectron/object_detection_3d_cup.tflite"
    label_name: str = "Coffee cup, Mug"


_MODEL_DICT = {"Shoe": ShoeModel(), "Chair": ChairModel(), "Cup": CupModel(),
               "Camera": CameraModel()}  # fmt: skip


def get_model_by_name(name: str) -> ObjectronModel:
    """The model description of `name` ("Shoe", "Chair", "Cup", "Camera")."""
    if name not in _MODEL_DICT:
        raise ValueError(f"{name} is not a valid model name for Objectron.")
    return _MODEL_DICT[name]


@dataclasses.dataclass
class ObjectronOutputs:
    landmarks_2d: object  # NormalizedLandmarkList
    landmarks_3d: object  # LandmarkList
    rotation: np.ndarray
    translation: np.ndarray
    scale: np.ndarray


class Objectron(SolutionBase):
    """MediaPipe Objectron: not available (see the module docstring)."""

    def __init__(self, static_image_mode: bool = False, max_num_objects: int = 5,
                 min_detection_confidence: float = 0.5, min_tracking_confidence: float = 0.99,
                 model_name: str = "Shoe", focal_length: tuple[float, float] = (1.0, 1.0),
                 principal_point: tuple[float, float] = (0.0, 0.0),
                 image_size: tuple[int, int] | None = None):  # fmt: skip
        model = get_model_by_name(model_name)
        raise _ModelError(
            f"mp.solutions.objectron.Objectron(model_name={model_name!r}) needs MediaPipe's "
            f"Objectron models ({_DETECTOR.rsplit('/', 1)[1]} and "
            f"{model.model_path.rsplit('/', 1)[1]}), which are in no registry this project "
            f"fetches models from (engine-fetch models), and engine.vision has no Objectron "
            f"solution; use mediapipe itself for it"
        )

    def process(self, image: np.ndarray):
        """Processes an RGB image (never reached: Objectron cannot be made)."""
        return super().process(input_data={"image": image})
