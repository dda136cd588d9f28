"""The per-frame fields of a solution's result: `ar-demo --results` (JSON lines,
app/results.py) and `engine-extract` (Parquet, engine/tools/extract/table.py) write them.

- each solution declares its fields once, as data, beside its result (its module's
  `FIELDS`, read through engine/vision/registry.py): "float32" / "int32" / "bool" /
  "string" scalars; `(dtype, *shape)` an array of fixed shape (None: any length, e.g.
  keypoint counts); `[spec]` a list of items (one per face, hand, detection); a dict a group
  of named fields. Every field may be None (no pose found, detector did not run). Here:
  the pieces they share (FRAME, RECT, DETECTION, MASK, POSE) and their converters
- `frame_record(index, result)` -> dict of the fields of one frame: numpy arrays and
  Python scalars, unrounded (the JSON writer rounds, Parquet stores float32)
- coordinates in frame pixels (`*_px`, z on x's scale, as the results' own `landmarks_px`);
  results that are normalised only (Holistic's parts) are scaled by (W, H, W) here
- usage: `rec = frame_record(i, face_mesh.process(rgb)); rec["meshes"][0]["landmarks_px"]`
"""

from __future__ import annotations

from dataclasses import asdict

import numpy as np

F32, I32, BOOL, STR = "float32", "int32", "bool", "string"

RECT = {"x_center": F32, "y_center": F32, "width": F32, "height": F32, "rotation": F32}
DETECTION = {"score": F32, "box_px": (F32, 4), "box": (F32, 4),
             "keypoints_px": (F32, None, 2), "keypoints": (F32, None, 2)}  # fmt: skip
MASK = {"mean": F32, "person_fraction": F32, "person_box_px": (I32, 4)}
FRAME = {"frame": I32, "image_size": (I32, 2)}
POSE = {"pose": BOOL, "detector_ran": BOOL, "detections": [DETECTION], "tracked": BOOL,
        "roi": RECT, "landmarks_px": (F32, 33, 3), "visibility": (F32, 33),
        "presence": (F32, 33), "world_landmarks": (F32, 33, 3), "mask": MASK}  # fmt: skip


def fields_of(result_type: type) -> dict:
    """The fields of a result class; KeyError names the result classes that have fields."""
    from engine.vision.registry import by_result

    return by_result(result_type.__name__).fields


def frame_record(index: int, result) -> dict:
    """The fields of one frame's result (numpy results: output="numpy")."""
    from engine.vision.registry import by_result

    entry = by_result(type(result).__name__)
    return {"frame": index, "image_size": list(result.image_size), **entry.record(result)}


def detections(dets) -> list[dict] | None:
    if dets is None:
        return None
    return [{"score": float(d.score), "box_px": d.box_px, "box": d.box,
             "keypoints_px": d.keypoints_px, "keypoints": d.keypoints} for d in dets]  # fmt: skip


def mask(mask: np.ndarray | None) -> dict | None:
    if mask is None:
        return None
    person = mask > 0.5
    ys, xs = np.nonzero(person)
    box = [int(xs.min()), int(ys.min()), int(xs.max()) + 1, int(ys.max()) + 1] if xs.size else None
    return {"mean": float(mask.mean()), "person_fraction": float(person.mean()),
            "person_box_px": box}  # fmt: skip


def rect(rect) -> dict | None:
    return None if rect is None else {k: float(v) for k, v in asdict(rect).items()}


def pixels(landmarks: np.ndarray | None, size: tuple[int, int]) -> np.ndarray | None:
    """Normalised (N, 3) landmarks in frame pixels (z on x's scale)."""
    w, h = size
    return None if landmarks is None else landmarks * np.array([w, h, w], landmarks.dtype)


def pose(res) -> dict:
    """POSE's fields of a PoseResult."""
    return {"pose": res.landmarks is not None, "detector_ran": res.detections is not None,
            "detections": detections(res.detections), "tracked": res.tracked,
            "roi": rect(res.roi), "landmarks_px": res.landmarks_px,
            "visibility": res.visibility, "presence": res.presence,
            "world_landmarks": res.world_landmarks, "mask": mask(res.mask)}  # fmt: skip
