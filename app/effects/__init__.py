"""Effects by name; each module holds one (see base.py for what an effect does)."""

from __future__ import annotations


def effect_class(name: str):
    """The Effect subclass for an effect name (imported on demand: shaders compile late)."""
    if name == "segmentation":
        from app.effects.segmentation import SegmentationEffect

        return SegmentationEffect
    if name == "face-detection":
        from app.effects.face_detection import FaceDetectionEffect

        return FaceDetectionEffect
    if name == "face-mesh":
        from app.effects.face_mesh import FaceMeshEffect

        return FaceMeshEffect
    raise ValueError(f"unknown effect {name!r}")
