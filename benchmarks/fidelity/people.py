"""Fidelity on real footage: every solution of engine.vision and its options against
MediaPipe 0.10.14's own, and against MediaPipe's disagreement with itself.

- input: tests/data/mediapipe/people_clip.npz, people_holistic_refined.npz and
  people_options.npz (MediaPipe's runs), people_perturbed.npz and people_perturbed_faces.npz
  (MediaPipe's runs of the same on the clip perturbed: two pixels of each frame one 8-bit
  level, make_reference.py `perturb`); tests/data/mediapipe/make_reference.py made them
  from MediaPipe's Python solutions in a side venv; and the clip they were made from
  (tests/data/mediapipe/people.mp4, a render of engine-fetch samples' assets/people.mp4 kept
  in the repository: six shots with cuts; every frame checked against the references' CRC)
- output: per solution a markdown table of its metrics (median, p95, max, n), its targets,
  and the yardstick: for each distance, ours (the engine vs MediaPipe), MediaPipe's own
  (its perturbed run vs its run), their ratio and whether it is within RATIO_LIMIT; under
  the stamp line (benchmarks/common.py); JSON with --json (`solutions`: ours,
  `mediapipe_self`: MediaPipe's own metrics, `yardstick`: the rows)
- metrics, over a frame range run as a video from its first frame (a range should start
  where MediaPipe tracked nothing of that solution, as after a cut into a shot without it):
  - hands (complexity 1 and 0): frames where the hand count differs, hands whose handedness
    differs, landmark error px (x, y; hands matched in MediaPipe's order), world mm;
  - pose (complexity 1, 0, 2): frames where presence differs, landmark px, visibility error,
    world mm, mask IoU;
  - face mesh (max_num_faces=2; face_mesh_refined: refine_landmarks=True, 478 landmarks):
    frames where the face count differs, landmark px (refined: all 478, and the irises,
    468-477, apart as iris_px);
  - face detection (model_selection 0 and 1): frames where the count differs, box IoU and
    keypoint px of each detection (matched in MediaPipe's order) where the counts agree;
  - holistic (complexity 1, 0, 2): per part (pose, left hand, right hand, face: complexity
    1's only) frames where presence differs and landmark px;
  - holistic_refined (refine_face_landmarks=True): its face only (the rest is holistic's):
    frames where presence differs, landmark px of all 478, iris_px of 468-477;
  - selfie segmentation (model_selection 0 and 1): mask IoU at 0.5
- targets: counts and handedness agree on >= 99 % of frames, landmarks and keypoints median
  <= 1 px and p95 <= 3 px, pose world landmarks median <= 5 mm, box IoU median >= 0.98, mask
  IoU median >= 0.99; where one is missed, the yardstick (benchmarks/fidelity/yardstick.py:
  within RATIO_LIMIT of MediaPipe's own distance for that metric) says whether MediaPipe
  is as far from itself. Exit status 0 when every target is met or within the yardstick
  (`verdict`), 1 otherwise, 2 when the references or the clip are missing or differ
- two other comparisons for Pose and Holistic (people_pose_variants.npz): --reference
  resync, both restarted at each cut (the shots apart from what tracking carries over a
  cut); --spread, no engine: MediaPipe with frames 1 us further apart against its own run
- usage: python -m benchmarks.fidelity.people [--solutions hands1,pose0,holistic,...]
         [--start 0] [--frames 300] [--json out/fidelity_people.json] [--precision fp16]
         [--backend auto|webgpu|xnnpack]  (the solutions' backend: engine/vision/backends)
         [--reference mediapipe|resync] [--spread] [--set OPTION=VALUE]  (over the case's)
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from dataclasses import dataclass, field
from types import SimpleNamespace

import numpy as np

from benchmarks.common import Bench, table
from benchmarks.fidelity.compare import (
    HOLISTIC_REFINED_REFERENCE,
    OPTIONS_REFERENCE,
    PEOPLE_CLIP,
    PEOPLE_REFERENCE,
    PERTURBED_FACES_REFERENCE,
    PERTURBED_REFERENCE,
    POSE_VARIANTS_REFERENCE,
    ClipMismatch,
    box_iou,
    clip_frames,
    load_reference,
)
from benchmarks.fidelity.yardstick import RATIO_LIMIT, format_yardstick, rows_for, yardstick


@dataclass(frozen=True)
class Case:
    """One solution with one option set: its family (which metrics), the reference arrays'
    prefix (make_reference.py RUNS), engine.vision's class and the options it runs with."""

    family: str
    key: str
    cls: str
    options: dict = field(default_factory=dict)


CASES = {
    "hands1": Case("hands", "hands1", "Hands", {"model_complexity": 1}),
    "hands0": Case("hands", "hands0", "Hands", {"model_complexity": 0}),
    "pose": Case("pose", "pose", "Pose", {"model_complexity": 1, "enable_segmentation": True}),
    "pose0": Case("pose", "pose0", "Pose", {"model_complexity": 0, "enable_segmentation": True}),
    "pose2": Case("pose", "pose2", "Pose", {"model_complexity": 2, "enable_segmentation": True}),
    "face_mesh": Case("face_mesh", "fm", "FaceMesh", {"max_num_faces": 2}),
    "face_mesh_refined": Case("face_mesh", "fmr", "FaceMesh",
                              {"max_num_faces": 2, "refine_landmarks": True}),
    "face_detection0": Case("face_detection", "fd0", "FaceDetector", {"model_selection": 0}),
    # at the model's graph's own threshold (0.6 full range), FaceDetector's default, as
    # MediaPipe 0.10.14 keeps it whatever min_detection_confidence it is given
    "face_detection1": Case("face_detection", "fd1", "FaceDetector", {"model_selection": 1}),
    "holistic": Case("holistic", "ho", "Holistic", {"model_complexity": 1}),
    "holistic0": Case("holistic", "ho0", "Holistic", {"model_complexity": 0}),
    "holistic2": Case("holistic", "ho2", "Holistic", {"model_complexity": 2}),
    "holistic_refined": Case("holistic_refined", "hor", "Holistic",
                             {"refine_face_landmarks": True}),
    "selfie_segmentation0": Case("selfie_segmentation", "ss0", "SelfieSegmenter",
                                 {"model_selection": 0}),
    "selfie_segmentation1": Case("selfie_segmentation", "ss1", "SelfieSegmenter",
                                 {"model_selection": 1}),
}  # fmt: skip
SOLUTIONS = tuple(CASES)
# the solutions people_pose_variants.npz holds: --reference resync and --spread take these
RESYNC = ("pose", "holistic")
COMPARISONS = {
    "mediapipe": "MediaPipe's run from the clip's first frame (people_clip.npz)",
    "resync": "MediaPipe restarted at each cut, as the solution is here (each shot from both "
              "fresh states; people_pose_variants.npz resync_*)",
}  # fmt: skip
SPREAD = ("no engine: MediaPipe's own run with frames 33334 us apart instead of 33333 against "
          "its run from the clip's first frame (people_pose_variants.npz jitter_*)")  # fmt: skip
LABELS = ("Left", "Right")  # make_reference.py stores handedness as its index
TARGETS = {
    "count_agree": (">=", 0.99),
    "label_agree": (">=", 0.99),
    "landmark_px.median": ("<=", 1.0),
    "landmark_px.p95": ("<=", 3.0),
    "keypoint_px.median": ("<=", 1.0),
    "keypoint_px.p95": ("<=", 3.0),
    "world_mm.median": ("<=", 5.0),
    "box_iou.median": (">=", 0.98),
    "mask_iou.median": (">=", 0.99),
}


def _stats(values) -> dict:
    v = np.asarray(values, np.float64)
    if v.size == 0:
        return {"n": 0}
    p = np.percentile(v, [5, 50, 95])
    return {"n": int(v.size), "p5": float(p[0]), "median": float(p[1]), "p95": float(p[2]),
            "max": float(v.max()), "min": float(v.min())}  # fmt: skip


def _mask(ref: dict, name: str, row: int) -> np.ndarray:
    """A stored mask (np.packbits of mask > 0.5) as a bool (H, W) array."""
    w, h = (int(v) for v in ref["size"])
    return np.unpackbits(ref[name][row])[: w * h].reshape(h, w).astype(bool)


def _iou(got: np.ndarray, want: np.ndarray) -> float:
    union = (got | want).sum()
    return float((got & want).sum() / union) if union else 1.0


# --- the metrics: each family's results (the engine's, or a stored run's) vs a reference ---
def hands_metrics(ref: dict, key: str, results, start: int) -> dict:
    """`results`: per frame from `start`, the hands (each with landmarks, world_landmarks,
    handedness.label), against the reference's K_* arrays."""
    count_same, labels_same, px, mm = [], [], [], []
    size = np.array(ref["size"], np.float64)
    for i, got in enumerate(results, start):
        sel = ref[f"{key}_frame"] == i
        want = ref[f"{key}_landmarks"][sel]
        count_same.append(len(got) == len(want))
        if len(got) != len(want):
            continue
        w_world, w_label = ref[f"{key}_world"][sel], ref[f"{key}_label"][sel]
        for h, lm, world, label in zip(got, want, w_world, w_label, strict=True):
            labels_same.append(h.handedness.label == LABELS[int(label)])
            px.extend(np.linalg.norm((h.landmarks[:, :2] - lm[:, :2]) * size, axis=1))
            mm.extend(1000 * np.linalg.norm(h.world_landmarks - world, axis=1))
    return {"frames": len(count_same), "count_agree": float(np.mean(count_same)),
            "label_agree": float(np.mean(labels_same)) if labels_same else 1.0,
            "landmark_px": _stats(px), "world_mm": _stats(mm)}  # fmt: skip


def pose_metrics(ref: dict, results, start: int, key: str = "pose") -> dict:
    """Pose's metrics of `results` (frames from `start`; each with landmarks, visibility,
    world_landmarks, mask as PoseResult has them) against the reference's K_* arrays."""
    size = np.array(ref["size"], np.float64)
    present = np.cumsum(ref[f"{key}_present"]) - 1  # frame -> its row among the present ones
    mask_rows = np.cumsum(ref[f"{key}_mask_present"]) - 1
    same, px, vis, mm, ious = [], [], [], [], []
    for i, r in enumerate(results, start):
        want = bool(ref[f"{key}_present"][i])
        same.append((r.landmarks is not None) == want)
        if r.landmarks is None or not want:
            continue
        lm = ref[f"{key}_landmarks"][present[i]]
        px.extend(np.linalg.norm((r.landmarks[:, :2] - lm[:, :2]) * size, axis=1))
        vis.extend(np.abs(r.visibility - lm[:, 3]))
        mm.extend(1000 * np.linalg.norm(r.world_landmarks - ref[f"{key}_world"][present[i]],
                                        axis=1))  # fmt: skip
        if ref[f"{key}_mask_present"][i]:
            ious.append(_iou(r.mask > 0.5, _mask(ref, f"{key}_mask_bits", mask_rows[i])))
    return {"frames": len(same), "count_agree": float(np.mean(same)),
            "landmark_px": _stats(px), "visibility": _stats(vis), "world_mm": _stats(mm),
            "mask_iou": _stats(ious)}  # fmt: skip


def face_mesh_metrics(ref: dict, key: str, results, start: int) -> dict:
    """`results`: per frame the faces (each with landmarks); the irises (468-477) apart
    where there are 478."""
    size = np.array(ref["size"], np.float64)
    n = ref[f"{key}_landmarks"].shape[1]
    same, px = [], []
    for i, got in enumerate(results, start):
        want = ref[f"{key}_landmarks"][ref[f"{key}_frame"] == i]
        same.append(len(got) == len(want))
        if len(got) == len(want):
            for f, lm in zip(got, want, strict=True):
                px.append(np.linalg.norm((f.landmarks[:, :2] - lm[:, :2]) * size, axis=1))
    px = np.reshape(px, (-1, n))  # faces x landmarks
    metrics = {"frames": len(same), "count_agree": float(np.mean(same)),
               "landmark_px": _stats(px.reshape(-1))}  # fmt: skip
    if n == 478:
        metrics["iris_px"] = _stats(px[:, 468:].reshape(-1))
    return metrics


def face_detection_metrics(ref: dict, key: str, results, start: int) -> dict:
    """`results`: per frame the detections (each with box and keypoints, normalised), matched
    to MediaPipe's in order where the counts agree (both sort by score)."""
    size = np.array(ref["size"], np.float64)
    same, ious, px = [], [], []
    for i, got in enumerate(results, start):
        sel = ref[f"{key}_frame"] == i
        boxes, kps = ref[f"{key}_box"][sel], ref[f"{key}_keypoints"][sel]
        same.append(len(got) == len(boxes))
        if len(got) != len(boxes):
            continue
        for d, box, kp in zip(got, boxes, kps, strict=True):
            ious.append(box_iou(np.asarray(d.box) * np.tile(size, 2), box * np.tile(size, 2)))
            px.extend(np.linalg.norm((np.asarray(d.keypoints) - kp) * size, axis=1))
    return {"frames": len(same), "count_agree": float(np.mean(same)),
            "box_iou": _stats(ious), "keypoint_px": _stats(px)}  # fmt: skip


HOLISTIC_PARTS = {"pose": "pose_landmarks", "left": "left_hand_landmarks",
                  "right": "right_hand_landmarks", "face": "face_landmarks"}  # fmt: skip


def holistic_metrics(ref: dict, results, start: int, key: str = "ho") -> dict:
    """Holistic's metrics of `results` (frames from `start`; each with HolisticResult's
    pose_landmarks, left_hand_landmarks, right_hand_landmarks, face_landmarks) against the
    reference's K_* arrays (the parts it holds: complexity 0 and 2 have no face)."""
    size = np.array(ref["size"], np.float64)
    parts = {p: a for p, a in HOLISTIC_PARTS.items() if f"{key}_{p}_present" in ref}
    rows = {p: np.cumsum(ref[f"{key}_{p}_present"]) - 1 for p in parts}
    same = {p: [] for p in parts}
    px = {p: [] for p in parts}
    for i, r in enumerate(results, start):
        for part, attr in parts.items():
            got, want = getattr(r, attr), bool(ref[f"{key}_{part}_present"][i])
            same[part].append((got is not None) == want)
            if got is not None and want:
                lm = ref[f"{key}_{part}_landmarks"][rows[part][i]]
                px[part].extend(np.linalg.norm((got[:, :2] - lm[:, :2]) * size, axis=1))
    everything = [v for p in parts for v in px[p]]
    return {"frames": len(same["pose"]),
            "count_agree": float(min(np.mean(v) for v in same.values())),
            **{f"{p}_agree": float(np.mean(same[p])) for p in parts},
            **{f"{p}_px": _stats(px[p]) for p in parts},
            "landmark_px": _stats(everything)}  # fmt: skip


def refined_face_metrics(ref: dict, results, start: int, key: str = "hor") -> dict:
    """Holistic's refined face (`face_landmarks`, 478) against the reference's K_face_*."""
    size = np.array(ref["size"], np.float64)
    rows = np.cumsum(ref[f"{key}_face_present"]) - 1
    same, px = [], []
    for i, r in enumerate(results, start):
        got, want = r.face_landmarks, bool(ref[f"{key}_face_present"][i])
        same.append((got is not None) == want)
        if got is not None and want:
            lm = ref[f"{key}_face_landmarks"][rows[i]]
            px.append(np.linalg.norm((got[:, :2] - lm[:, :2]) * size, axis=1))
    px = np.reshape(px, (-1, 478))
    return {"frames": len(same), "count_agree": float(np.mean(same)),
            "landmark_px": _stats(px.reshape(-1)), "iris_px": _stats(px[:, 468:].reshape(-1))}  # fmt: skip


def segmentation_metrics(ref: dict, key: str, results, start: int) -> dict:
    """`results`: per frame an object with `mask` (H, W); IoU at 0.5 with K_mask_bits."""
    ious = [_iou(r.mask > 0.5, _mask(ref, f"{key}_mask_bits", i))
            for i, r in enumerate(results, start)]  # fmt: skip
    return {"frames": len(ious), "count_agree": 1.0, "mask_iou": _stats(ious)}


def metrics(name: str, ref: dict, results, start: int) -> dict:
    """CASES[name]'s metrics of `results` (per frame from `start`, as `engine_results` or
    `recorded_results` give them) against `ref`."""
    case = CASES[name]
    family, key = case.family, case.key
    if family == "hands":
        return hands_metrics(ref, key, results, start)
    if family == "pose":
        return pose_metrics(ref, results, start, key)
    if family == "face_mesh":
        return face_mesh_metrics(ref, key, results, start)
    if family == "face_detection":
        return face_detection_metrics(ref, key, results, start)
    if family == "holistic":
        return holistic_metrics(ref, results, start, key)
    if family == "holistic_refined":
        return refined_face_metrics(ref, results, start, key)
    return segmentation_metrics(ref, key, results, start)


# --- the results: the engine's, or a stored MediaPipe run's ------------------------------
def restarted(make, frames, start: int, cuts=()):
    """Each frame's result from `make()`'s solution, frames [start, ...] in order as a video,
    a new solution at each frame of `cuts` (its tracking and filters restart there)."""
    solution = None
    try:
        for i, rgb in enumerate(frames, start):
            if solution is None or i in cuts:
                if solution is not None:
                    solution.close()
                solution = make()
            yield solution.process(rgb)
    finally:
        if solution is not None:
            solution.close()


# what the metrics read of each family's result: its objects (Hands, FaceMesh, FaceDetector),
# or the result itself
OBJECTS = {"hands": "hands", "face_mesh": "faces", "face_detection": "detections"}


def engine_results(name: str, frames, start: int, cuts=(), **options):
    """engine.vision's CASES[name] over `frames` (from `start`, as a video; restarted at each
    frame of `cuts`), `options` (engine options) added to the case's: per frame what the
    metrics read."""
    import engine.vision

    case = CASES[name]
    cls = getattr(engine.vision, case.cls)
    objects = OBJECTS.get(case.family)
    for r in restarted(lambda: cls(**{**case.options, **options}), frames, start, cuts):
        yield getattr(r, objects) if objects else r


def recorded(variant: dict, key: str, width: int, start: int, count: int) -> list:
    """A stored run's `key` landmarks (its K_present / K_landmarks arrays), frame by frame
    from `start`: an array, or None where it found nothing; `width` columns kept."""
    rows = np.cumsum(variant[f"{key}_present"]) - 1
    return [variant[f"{key}_landmarks"][rows[i]][:, :width] if variant[f"{key}_present"][i]
            else None for i in range(start, start + count)]  # fmt: skip


def recorded_results(name: str, run: dict, start: int, count: int) -> list:
    """A stored MediaPipe run of CASES[name] (its arrays under the reference's names: the
    perturbed files, or a variant with its prefix removed) as per-frame results in the
    shape `engine_results` gives, for the same metrics."""
    case = CASES[name]
    family, key = case.family, case.key
    frames = range(start, start + count)
    if family in ("hands", "face_mesh", "face_detection"):
        out = []
        for i in frames:
            sel = run[f"{key}_frame"] == i
            if family == "hands":
                found = zip(run[f"{key}_landmarks"][sel], run[f"{key}_world"][sel],
                            run[f"{key}_label"][sel], strict=True)  # fmt: skip
                out.append([SimpleNamespace(landmarks=lm, world_landmarks=world,
                                            handedness=SimpleNamespace(label=LABELS[int(lab)]))
                            for lm, world, lab in found])  # fmt: skip
            elif family == "face_mesh":
                out.append([SimpleNamespace(landmarks=lm) for lm in run[f"{key}_landmarks"][sel]])
            else:
                found = zip(run[f"{key}_box"][sel], run[f"{key}_keypoints"][sel], strict=True)
                out.append([SimpleNamespace(box=b, keypoints=k) for b, k in found])
        return out
    if family == "pose":
        lm = recorded(run, key, 4, start, count)
        rows = np.cumsum(run[f"{key}_present"]) - 1
        mask_rows = np.cumsum(run[f"{key}_mask_present"]) - 1
        return [SimpleNamespace(
            landmarks=None if p is None else p[:, :3], visibility=None if p is None else p[:, 3],
            world_landmarks=None if p is None else run[f"{key}_world"][rows[i]],
            mask=_mask(run, f"{key}_mask_bits", mask_rows[i])
            if run[f"{key}_mask_present"][i] else None,
        ) for i, p in zip(frames, lm, strict=True)]  # fmt: skip
    if family in ("holistic", "holistic_refined"):
        parts = {attr: recorded(run, f"{key}_{p}", 3, start, count)
                 for p, attr in HOLISTIC_PARTS.items() if f"{key}_{p}_present" in run}  # fmt: skip
        return [SimpleNamespace(**{a: v[k] for a, v in parts.items()}) for k in range(count)]
    return [SimpleNamespace(mask=_mask(run, f"{key}_mask_bits", i)) for i in frames]


def compare_solution(name: str, ref: dict, frames, start: int, cuts=(), **options) -> dict:
    """`name`'s metrics over `frames` (from `start`) against `ref`; Pose and Holistic
    restart at each frame of `cuts` (the others take none)."""
    if name not in CASES:
        raise ValueError(f"unknown solution {name!r}; known: {', '.join(SOLUTIONS)}")
    if cuts and name not in RESYNC:
        raise ValueError(f"{name}: only {', '.join(RESYNC)} restart at cuts")
    return metrics(name, ref, engine_results(name, frames, start, cuts, **options), start)


def mediapipe_self(name: str, ref: dict, perturbed: dict, start: int, count: int) -> dict:
    """`name`'s metrics of MediaPipe's run on the perturbed clip against its run on the clip
    (`ref`): MediaPipe's disagreement with itself, the yardstick's floor. No engine runs."""
    return metrics(name, ref, recorded_results(name, perturbed, start, count), start)


def mediapipe_spread(name: str, ref: dict, jitter: dict, start: int, count: int) -> dict:
    """`name`'s metrics of MediaPipe's own run with frames 1 us further apart (the variant
    file's jitter_* arrays, prefix removed) against the reference: no engine runs."""
    if name not in RESYNC:
        raise ValueError(f"{name}: MediaPipe's spread is stored for {', '.join(RESYNC)} only")
    return mediapipe_self(name, ref, jitter, start, count)


def load_variant(name: str) -> dict:
    """people_pose_variants.npz's `name` run (resync or jitter), its prefix removed, with the
    clip's frame_crc32 and size."""
    variants = load_reference(POSE_VARIANTS_REFERENCE)
    prefix = f"{name}_"
    return {"frame_crc32": variants["frame_crc32"], "size": variants["size"],
            **{k.removeprefix(prefix): v for k, v in variants.items() if k.startswith(prefix)}}  # fmt: skip


def check_targets(metrics: dict) -> list[tuple[str, float, str, bool]]:
    """(metric, value, target, met) for each target the metrics have."""
    rows = []
    for key, (op, threshold) in TARGETS.items():
        value = metrics
        for part in key.split("."):
            value = value.get(part) if isinstance(value, dict) else None
        if value is None:
            continue
        ok = value >= threshold if op == ">=" else value <= threshold
        rows.append((key, float(value), f"{op} {threshold:g}", bool(ok)))
    return rows


def verdict(metrics: dict, rows: list[dict] | None) -> list[tuple]:
    """check_targets' rows, each with its yardstick: (metric, value, target, met, ratio,
    met or within RATIO_LIMIT of MediaPipe's own). `rows`: yardstick() of the metrics (None:
    no floor, the ratio is None and only the target counts); a metric pooled over
    Holistic's parts takes the largest ratio of its parts (yardstick.rows_for)."""
    out = []
    for key, value, target, ok in check_targets(metrics):
        own = rows_for(key, rows or [])
        r = max((row["ratio"] for row in own), default=None)
        out.append((key, value, target, ok, r, ok or (r is not None and r <= RATIO_LIMIT)))
    return out


def _merged(paths) -> dict:
    """The arrays of several reference files made from the same frames (checked), merged."""
    merged: dict = {}
    for path in paths:
        arrays = load_reference(path)
        if merged and not np.array_equal(arrays["frame_crc32"], merged["frame_crc32"]):
            raise ClipMismatch(f"{path} and {paths[0]}: made from other frames")
        merged |= arrays
    return merged


def load_frames(start: int, count: int) -> tuple[dict, list[np.ndarray]]:
    """The references (people_clip.npz's arrays, people_holistic_refined.npz's hor_* and
    people_options.npz's) and frames [start, start + count) of the clip they were made from
    (compare.PEOPLE_CLIP, RGB)."""
    ref = _merged([PEOPLE_REFERENCE, HOLISTIC_REFINED_REFERENCE, OPTIONS_REFERENCE])
    clip = PEOPLE_CLIP
    if not clip.is_file():
        raise FileNotFoundError(f"{clip} is missing (it is kept in the repository)")
    count = min(count, len(ref["frame_crc32"]) - start)
    frames = clip_frames(clip, ref["frame_crc32"], start + count)
    if len(frames) < start + count:
        raise ClipMismatch(f"{clip}: {len(frames)} frames, the reference has {start + count}")
    return ref, frames[start:]


def load_perturbed() -> dict:
    """MediaPipe's runs on the perturbed clip (people_perturbed.npz and
    people_perturbed_faces.npz), under the reference's names; the perturbation's record
    (perturb_seed, perturb_positions, perturb_steps, perturbed_crc32) with them."""
    return _merged([PERTURBED_REFERENCE, PERTURBED_FACES_REFERENCE])


def format_report(results: dict, floors: dict | None = None) -> str:
    """Each solution's metrics, its targets and their yardstick, and the yardstick's rows
    where `floors` (MediaPipe against itself, per solution) has it."""
    floors = floors or {}
    lines = []
    for name, m in results.items():
        rows = [[k, f"{v['median']:.4f}", f"{v['p95']:.4f}", f"{v['max']:.4f}", v["n"]]
                for k, v in m.items() if isinstance(v, dict) and v.get("n")]  # fmt: skip
        lines += [f"## {name}: {m['frames']} frames, counts agree on {m['count_agree']:.1%}"
                  + (f", handedness on {m['label_agree']:.1%}" if "label_agree" in m else ""),
                  "", *table(["metric", "median", "p95", "max", "n"], rows, "lrrrr"), ""]  # fmt: skip
        rows = yardstick(CASES[name].family, m, floors[name]) if name in floors else None
        targets = [[k, f"{v:.4f}", t, "yes" if ok else "NO",
                    "-" if r is None else "inf" if math.isinf(r) else f"{r:.2f}",
                    "yes" if met else "NO"] for k, v, t, ok, r, met in verdict(m, rows)]  # fmt: skip
        lines += [*table(["target", "value", "wanted", "met", "ratio to MediaPipe's own",
                          f"met or ratio <= {RATIO_LIMIT:g}"], targets, "lrllrl"), ""]  # fmt: skip
        if rows is not None:
            lines += [f"yardstick (ours / MediaPipe's own under the perturbation, within "
                      f"{RATIO_LIMIT:g}):", "", *format_yardstick(rows), ""]  # fmt: skip
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--solutions", default="",
                    help="comma-separated (default: every one the backend runs)")  # fmt: skip
    ap.add_argument("--start", type=int, default=0)
    ap.add_argument("--frames", type=int, default=300)
    ap.add_argument("--json", default="out/fidelity_people.json")
    ap.add_argument("--precision", default="fp32")
    ap.add_argument("--adapter", default=None)
    ap.add_argument("--backend", default="auto", choices=("auto", "webgpu", "xnnpack"))
    ap.add_argument("--reference", default="mediapipe", choices=sorted(COMPARISONS),
                    help="; ".join(f"{k}: {v}" for k, v in COMPARISONS.items()))  # fmt: skip
    ap.add_argument("--spread", action="store_true", help=SPREAD)
    ap.add_argument("--set", action="append", default=[], metavar="OPTION=VALUE",
                    help="a solution option over its case's (a JSON value: "
                         "min_detection_confidence=0.5); repeatable")  # fmt: skip
    args = ap.parse_args(argv)
    try:
        overrides = {k: json.loads(v) for k, v in (o.split("=", 1) for o in args.set)}
    except ValueError:
        ap.error(f"--set takes OPTION=JSON, not {args.set}")
    variant = args.reference != "mediapipe" or args.spread
    if args.reference != "mediapipe" and args.spread:
        ap.error("--spread compares with the default reference only")
    names = [s for s in args.solutions.split(",") if s] or list(RESYNC if variant else SOLUTIONS)
    known = RESYNC if variant else SOLUTIONS
    unknown = [n for n in names if n not in known]
    if unknown:
        print(f"fidelity: unknown solutions {unknown} here; known: {', '.join(known)}",
              file=sys.stderr)  # fmt: skip
        return 2
    try:
        ref, frames = load_frames(args.start, args.frames)
        perturbed = None if variant else load_perturbed()
    except (ClipMismatch, FileNotFoundError) as exc:
        print(f"fidelity: {exc}", file=sys.stderr)
        return 2
    cuts: set[int] = set()
    if args.reference == "resync":
        from engine.catalog.people import shot_starts

        ref |= load_variant("resync")
        cuts = set(shot_starts()[:-1])
        if args.start not in cuts:
            ap.error(f"--reference resync: --start at a cut ({sorted(cuts)}), where both restart")
    from engine.gpu import shared_context

    bench = Bench(__spec__.name, argv)
    bench.use(shared_context(args.adapter))
    results, seconds, floors, rows = {}, {}, {}, {}
    jitter = load_variant("jitter") if args.spread else None
    for name in names:
        t = time.perf_counter()
        if jitter is not None:
            results[name] = mediapipe_spread(name, ref, jitter, args.start, len(frames))
        else:
            results[name] = compare_solution(name, ref, frames, args.start, cuts,
                                             backend=args.backend, precision=args.precision,
                                             adapter=args.adapter, **overrides)  # fmt: skip
        seconds[name] = time.perf_counter() - t
        if perturbed is not None:
            floors[name] = mediapipe_self(name, ref, perturbed, args.start, len(frames))
            rows[name] = yardstick(CASES[name].family, results[name], floors[name])
    against = SPREAD if args.spread else COMPARISONS[args.reference]
    doc = {"solutions": results, "mediapipe_self": floors, "yardstick": rows,
           "seconds": seconds, "ratio_limit": RATIO_LIMIT,
           "options": {"start": args.start, "frames": len(frames), "precision": args.precision,
                       "backend": args.backend, "reference": args.reference,
                       "spread": args.spread, "set": overrides}}  # fmt: skip
    bench.report(f"Against {against}.\n\n" + format_report(results, floors), doc, args.json)
    met = all(row[-1] for name, m in results.items() for row in verdict(m, rows.get(name)))
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
