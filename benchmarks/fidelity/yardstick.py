"""The fidelity yardstick: our distance from MediaPipe over MediaPipe's distance from itself.

- input: a solution's metrics against MediaPipe's run (benchmarks/fidelity/people.py, the
  engine's results) and the same metrics of MediaPipe's run on the perturbed clip against
  its run on the clip (its self-disagreement: two pixels of each frame moved one 8-bit
  level, tests/data/mediapipe/make_reference.py `perturb`)
- output: per distance of the solution's family (DISTANCES) a row: ours, MediaPipe's own,
  the ratio, and whether it is within RATIO_LIMIT
- semantics: every metric as a distance (0: the same): counts and handedness as the
  fraction of frames (hands) that disagree, IoUs as 1 - IoU (the median's, and the 5th
  percentile's as the p95), pixels, millimetres and visibility as they are. The ratio is
  ours / MediaPipe's; where MediaPipe's own is 0 it is 0 when ours is 0 too, else inf
  (MediaPipe does not move there at all under the perturbation)
- usage: rows = yardstick("pose", ours, mediapipe_self); print("\\n".join(format_yardstick(rows)))
"""

from __future__ import annotations

import math

from benchmarks.common import table

RATIO_LIMIT = 1.5  # ours within 1.5x of MediaPipe's own disagreement


def _landmarks(label: str, key: str) -> list[tuple[str, str, bool]]:
    return [(f"{label} median", f"{key}.median", False), (f"{label} p95", f"{key}.p95", False)]


def _presence(label: str, key: str) -> tuple[str, str, bool]:
    return (label, key, True)


# family -> (label, metric path, True where the metric is an agreement or IoU: 1 - value)
DISTANCES = {
    "hands": [_presence("frames where the count differs", "count_agree"),
              _presence("hands whose handedness differs", "label_agree"),
              *_landmarks("landmark px", "landmark_px"), *_landmarks("world mm", "world_mm")],
    "pose": [_presence("frames where presence differs", "count_agree"),
             *_landmarks("landmark px", "landmark_px"), *_landmarks("visibility", "visibility"),
             *_landmarks("world mm", "world_mm"), ("mask 1 - IoU median", "mask_iou.median", True),
             ("mask 1 - IoU p95", "mask_iou.p5", True)],
    "face_mesh": [_presence("frames where the count differs", "count_agree"),
                  *_landmarks("landmark px", "landmark_px"), *_landmarks("iris px", "iris_px")],
    "face_detection": [_presence("frames where the count differs", "count_agree"),
                       ("box 1 - IoU median", "box_iou.median", True),
                       ("box 1 - IoU p95", "box_iou.p5", True),
                       *_landmarks("keypoint px", "keypoint_px")],
    "holistic": [_presence("any part: frames where presence differs", "count_agree"),
                 *[row for part in ("pose", "left", "right", "face")
                   for row in (_presence(f"{part}: frames where presence differs",
                                         f"{part}_agree"),
                               *_landmarks(f"{part}: landmark px", f"{part}_px"))]],
    "holistic_refined": [_presence("frames where presence differs", "count_agree"),
                         *_landmarks("landmark px", "landmark_px"),
                         *_landmarks("iris px", "iris_px")],
    "selfie_segmentation": [("mask 1 - IoU median", "mask_iou.median", True),
                            ("mask 1 - IoU p95", "mask_iou.p5", True)],
}  # fmt: skip


def distance(metrics: dict, path: str, loss: bool) -> float | None:
    """The metric at `path` ("landmark_px.median") as a distance; None where it is absent
    (nothing to compare: no frame where both found the object)."""
    value = metrics
    for part in path.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    if value is None:
        return None
    return 1.0 - float(value) if loss else float(value)


def ratio(ours: float, floor: float) -> float:
    """ours / floor; 0 / 0 is 0, anything else over 0 is inf."""
    if floor > 0:
        return ours / floor
    return 0.0 if ours == 0 else math.inf


def yardstick(family: str, ours: dict, mediapipe_self: dict) -> list[dict]:
    """One row per distance both metrics have: metric, ours, mediapipe_self, ratio, within."""
    rows = []
    for label, path, loss in DISTANCES[family]:
        a, b = distance(ours, path, loss), distance(mediapipe_self, path, loss)
        if a is None or b is None:
            continue
        r = ratio(a, b)
        rows.append({"metric": label, "path": path, "ours": a, "mediapipe_self": b,
                     "ratio": r, "within": bool(r <= RATIO_LIMIT)})  # fmt: skip
    return rows


def rows_for(key: str, rows: list[dict]) -> list[dict]:
    """The yardstick rows that stand for a target's metric `key`: its own row, or for
    Holistic's landmarks pooled over its parts ("landmark_px.p95"), each part's (a pooled
    percentile moves with how many frames each part has, not only with the distances)."""
    exact = [r for r in rows if r["path"] == key]
    if exact or not key.startswith("landmark_px."):
        return exact
    stat = key.removeprefix("landmark_px.")
    return [r for r in rows if r["path"].endswith(f"_px.{stat}")
            and not r["path"].startswith("iris")]  # fmt: skip


def format_yardstick(rows: list[dict]) -> list[str]:
    """The rows as a markdown table (lines)."""
    cells = [[r["metric"], f"{r['ours']:.4g}", f"{r['mediapipe_self']:.4g}",
              "inf" if math.isinf(r["ratio"]) else f"{r['ratio']:.2f}",
              "yes" if r["within"] else "NO"] for r in rows]  # fmt: skip
    return table(["distance", "ours vs MediaPipe", "MediaPipe vs itself", "ratio",
                  f"<= {RATIO_LIMIT:g}"], cells, "lrrrl")  # fmt: skip
