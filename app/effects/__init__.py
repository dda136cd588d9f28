"""The effect registry: every effect, once, with the model roles it needs and its styles.

The CLI's --effect and --style choices, the automatic choice from the models
(app/models.py) and the pipeline read this; each effect's module holds its class (see
base.py for what an effect does) and is imported on demand (its shaders compile late).
Adding an effect: its module, one line below, a test.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass


@dataclass(frozen=True)
class EffectInfo:
    name: str
    module: str  # the module under app/effects holding the Effect subclass
    cls: str
    needs: tuple[str, ...]  # model roles (app/models.py model_role), in --model order
    styles: tuple[str, ...]  # the e key cycles through them; the first is the default
    solution: str  # `ar-demo --solution NAME`: MediaPipe's name for it
    models: tuple[str, ...]  # the manifest's models --solution runs, in `needs` order


EFFECTS: dict[str, EffectInfo] = {
    e.name: e
    for e in (
        EffectInfo(
            "face-mesh",
            "face_mesh",
            "FaceMeshEffect",
            ("detection", "landmarks"),
            ("points+roi", "points", "tesselation", "contours", "irises"),
            "face-mesh",
            ("face_detection_short_range", "face_landmark"),
        ),
        EffectInfo(
            "segmentation",
            "segmentation",
            "SegmentationEffect",
            ("segmentation",),
            ("blur", "replace", "tint", "mask"),
            "selfie-segmentation",
            ("selfie_segmentation",),
        ),
        EffectInfo(
            "face-detection",
            "face_detection",
            "FaceDetectionEffect",
            ("detection",),
            ("box+keypoints", "keypoints", "box"),
            "face-detection",
            ("face_detection_short_range",),
        ),
        EffectInfo(
            "hands",
            "hands",
            "HandsEffect",
            ("detection", "hand_landmarks"),
            ("skeleton+points", "skeleton"),
            "hands",
            ("palm_detection_full", "hand_landmark_full"),
        ),
        EffectInfo(
            "pose",
            "pose",
            "PoseEffect",
            ("detection", "pose_landmarks"),
            ("skeleton+points", "skeleton"),
            "pose",
            ("pose_detection", "pose_landmark_full"),
        ),
        EffectInfo(
            "holistic",
            "holistic",
            "HolisticEffect",
            ("pose_landmarks", "hand_landmarks", "landmarks"),
            ("skeleton+points", "skeleton"),
            "holistic",
            (
                "pose_detection",
                "pose_landmark_full",
                "hand_recrop",
                "hand_landmark_full",
                "face_detection_short_range",
                "face_landmark",
            ),
        ),
    )
}  # fmt: skip  (order: the automatic choice tries them in this order)


def effect_info(name: str) -> EffectInfo:
    if name not in EFFECTS:
        raise ValueError(f"unknown effect {name!r}; known: {', '.join(EFFECTS)}")
    return EFFECTS[name]


SOLUTIONS: dict[str, EffectInfo] = {e.solution: e for e in EFFECTS.values()}


def effect_class(name: str):
    """The Effect subclass for an effect name (imported on demand)."""
    info = effect_info(name)
    return getattr(importlib.import_module(f"{__name__}.{info.module}"), info.cls)
