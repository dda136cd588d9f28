"""The per-frame fields of every solution's result: one home for `ar-demo --results` (JSON
lines, app/results.py) and `engine-extract` (Parquet, engine/tools/extract/table.py).

- `FIELDS[result class name]`: the fields, declared once as data: "float32" / "int32" /
  "bool" / "string" scalars; `(dtype, *shape)` an array of fixed shape (None: any length,
  e.g. keypoint counts); `[spec]` a list of items (one per face, hand, detection); a dict a
  group of named fields. Every field may be None (no pose found, detector did not run).
- `frame_record(index, result)` -> dict of the fields of one frame: numpy arrays and
  Python scalars, unrounded (the JSON writer rounds, Parquet stores float32).
- coordinates in frame pixels (`*_px`, z on x's scale, as the results' own `landmarks_px`);
  Holistic's parts, whose results are normalised only, are scaled by (W, H, W) here.
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

MESH = {"presence": F32, "tracked": BOOL, "roi": RECT, "landmarks_px": (F32, None, 3)}
HAND = {"handedness": STR, "handedness_score": F32, "presence": F32, "tracked": BOOL,
        "roi": RECT, "landmarks_px": (F32, 21, 3), "world_landmarks": (F32, 21, 3)}  # fmt: skip
PARTS = {"left_hand_landmarks_px": (F32, 21, 3), "right_hand_landmarks_px": (F32, 21, 3),
         "face_landmarks_px": (F32, None, 3)}  # fmt: skip

# fmt: off
FIELDS: dict[str, dict] = {
    "FaceDetectorResult": {**FRAME, "faces": I32, "detections": [DETECTION]},
    "FaceMeshResult": {**FRAME, "faces": I32, "detector_ran": BOOL, "detections": [DETECTION],
                       "meshes": [MESH]},
    "SegmentationResult": {**FRAME, "mask": MASK},
    "HandsResult": {**FRAME, "hands": I32, "detector_ran": BOOL, "detections": [DETECTION],
                    "hand_landmarks": [HAND]},
    "PoseResult": {**FRAME, **POSE},
    "HolisticResult": {**FRAME, **POSE, **PARTS},
}
# fmt: on


def fields_of(result_type: type) -> dict:
    """The FIELDS of a result class; KeyError names the classes that have fields."""
    name = result_type.__name__
    if name not in FIELDS:
        raise KeyError(f"{name}: no per-frame fields declared (have: {', '.join(FIELDS)})")
    return FIELDS[name]


def _detections(dets) -> list[dict] | None:
    if dets is None:
        return None
    return [{"score": float(d.score), "box_px": d.box_px, "box": d.box,
             "keypoints_px": d.keypoints_px, "keypoints": d.keypoints} for d in dets]  # fmt: skip


def _mask(mask: np.ndarray | None) -> dict | None:
    if mask is None:
        return None
    person = mask > 0.5
    ys, xs = np.nonzero(person)
    box = [int(xs.min()), int(ys.min()), int(xs.max()) + 1, int(ys.max()) + 1] if xs.size else None
    return {"mean": float(mask.mean()), "person_fraction": float(person.mean()),
            "person_box_px": box}  # fmt: skip


def _rect(rect) -> dict | None:
    return None if rect is None else {k: float(v) for k, v in asdict(rect).items()}


def _pose(res) -> dict:
    return {"pose": res.landmarks is not None, "detector_ran": res.detections is not None,
            "detections": _detections(res.detections), "tracked": res.tracked,
            "roi": _rect(res.roi), "landmarks_px": res.landmarks_px,
            "visibility": res.visibility, "presence": res.presence,
            "world_landmarks": res.world_landmarks, "mask": _mask(res.mask)}  # fmt: skip


def _pixels(landmarks: np.ndarray | None, size: tuple[int, int]) -> np.ndarray | None:
    w, h = size
    return None if landmarks is None else landmarks * np.array([w, h, w], landmarks.dtype)


def _face_detector(res) -> dict:
    return {"faces": len(res.detections), "detections": _detections(res.detections)}


def _face_mesh(res) -> dict:
    return {"faces": len(res.faces), "detector_ran": res.detections is not None,
            "detections": _detections(res.detections),
            "meshes": [{"presence": float(f.presence), "tracked": f.tracked,
                        "roi": _rect(f.roi), "landmarks_px": f.landmarks_px}
                       for f in res.faces]}  # fmt: skip


def _hands(res) -> dict:
    return {"hands": len(res.hands), "detector_ran": res.palm_detections is not None,
            "detections": _detections(res.palm_detections),
            "hand_landmarks": [{"handedness": h.handedness.label,
                                "handedness_score": float(h.handedness.score),
                                "presence": float(h.presence), "tracked": h.tracked,
                                "roi": _rect(h.roi), "landmarks_px": h.landmarks_px,
                                "world_landmarks": h.world_landmarks}
                               for h in res.hands]}  # fmt: skip


def _holistic(res) -> dict:
    size = res.image_size
    return {**_pose(res.pose),
            "left_hand_landmarks_px": _pixels(res.left_hand_landmarks, size),
            "right_hand_landmarks_px": _pixels(res.right_hand_landmarks, size),
            "face_landmarks_px": _pixels(res.face_landmarks, size)}  # fmt: skip


RECORDS = {
    "FaceDetectorResult": _face_detector,
    "FaceMeshResult": _face_mesh,
    "SegmentationResult": lambda res: {"mask": _mask(res.mask)},
    "HandsResult": _hands,
    "PoseResult": _pose,
    "HolisticResult": _holistic,
}


def frame_record(index: int, result) -> dict:
    """The FIELDS of one frame's result (numpy results: output="numpy")."""
    name = type(result).__name__
    fields_of(type(result))
    return {"frame": index, "image_size": list(result.image_size), **RECORDS[name](result)}
