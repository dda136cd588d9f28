"""Fidelity on real footage: Hands, Pose, two-face FaceMesh (468 and 478 refined landmarks)
and Holistic vs MediaPipe 0.10.14's own.

- input: tests/data/mediapipe/people_clip.npz and people_holistic_refined.npz
  (tests/data/mediapipe/make_reference.py made them from MediaPipe's Python solutions in
  a side venv) and assets/people.mp4 (engine-fetch samples: six shots with cuts; every
  frame checked against the references' CRC)
- output: a markdown table per solution (metric, median, p95, max, frames) and the targets,
  under the stamp line (benchmarks/common.py); JSON with --json
- metrics, over a frame range run as a video from its first frame (a range should start
  where MediaPipe tracked nothing of that solution, as after a cut into a shot without it):
  - hands (complexity 1 and 0): frames where the hand count differs, hands whose handedness
    differs, landmark error px (x, y; hands matched in MediaPipe's order), world mm;
  - pose: frames where presence differs, landmark px, visibility error, world mm, mask IoU;
  - face mesh (max_num_faces=2; face_mesh_refined: refine_landmarks=True, 478 landmarks):
    frames where the face count differs, landmark px (refined: all 478, and the irises,
    468-477, apart as iris_px);
  - holistic: per part (pose, left hand, right hand, face) frames where presence differs
    and landmark px;
  - holistic_refined (refine_face_landmarks=True): its face only (the rest is holistic's):
    frames where presence differs, landmark px of all 478, iris_px of 468-477
- targets (issue 29): counts and handedness agree on >= 99 % of frames, landmarks median
  <= 1 px and p95 <= 3 px, pose world landmarks median <= 5 mm, masks IoU median >= 0.99
- usage: python -m benchmarks.fidelity.people [--solutions hands1,hands0,pose,face_mesh,...]
         [--start 0] [--frames 300] [--json out/fidelity_people.json] [--precision fp16]
         [--backend auto|webgpu|xnnpack]  (the solutions' backend: engine/vision/backend.py)
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from benchmarks.common import Bench, table
from benchmarks.fidelity.compare import (
    HOLISTIC_REFINED_REFERENCE,
    PEOPLE_REFERENCE,
    ClipMismatch,
    clip_frames,
    load_reference,
)

SOLUTIONS = ("hands1", "hands0", "pose", "face_mesh", "face_mesh_refined", "holistic",
             "holistic_refined")  # fmt: skip
# face_landmark_with_attention's: on webgpu only (engine/vision/backend.py webgpu_only)
REFINED = ("face_mesh_refined", "holistic_refined")
LABELS = ("Left", "Right")  # make_reference.py stores handedness as its index
TARGETS = {
    "count_agree": (">=", 0.99),
    "label_agree": (">=", 0.99),
    "landmark_px.median": ("<=", 1.0),
    "landmark_px.p95": ("<=", 3.0),
    "world_mm.median": ("<=", 5.0),
    "mask_iou.median": (">=", 0.99),
}


def _stats(values) -> dict:
    v = np.asarray(values, np.float64)
    if v.size == 0:
        return {"n": 0}
    p = np.percentile(v, [5, 50, 95])
    return {"n": int(v.size), "p5": float(p[0]), "median": float(p[1]), "p95": float(p[2]),
            "max": float(v.max()), "min": float(v.min())}  # fmt: skip


def compare_hands(ref: dict, frames, start: int, complexity: int, **options) -> dict:
    from engine.vision import Hands

    key = f"hands{complexity}"
    count_same, labels_same, px, mm = [], [], [], []
    size = np.array(ref["size"], np.float64)
    with Hands(model_complexity=complexity, **options) as hands:
        for i, rgb in enumerate(frames, start):
            got = hands.process(rgb).hands
            want = ref[f"{key}_landmarks"][ref[f"{key}_frame"] == i]
            count_same.append(len(got) == len(want))
            if len(got) != len(want):
                continue
            w_world = ref[f"{key}_world"][ref[f"{key}_frame"] == i]
            w_label = ref[f"{key}_label"][ref[f"{key}_frame"] == i]
            for h, lm, world, label in zip(got, want, w_world, w_label, strict=True):
                labels_same.append(h.handedness.label == LABELS[int(label)])
                px.extend(np.linalg.norm((h.landmarks[:, :2] - lm[:, :2]) * size, axis=1))
                mm.extend(1000 * np.linalg.norm(h.world_landmarks - world, axis=1))
    return {"frames": len(count_same), "count_agree": float(np.mean(count_same)),
            "label_agree": float(np.mean(labels_same)) if labels_same else 1.0,
            "landmark_px": _stats(px), "world_mm": _stats(mm)}  # fmt: skip


def compare_pose(ref: dict, frames, start: int, **options) -> dict:
    from engine.vision import Pose

    size = np.array(ref["size"], np.float64)
    w, h = (int(v) for v in ref["size"])
    present = np.cumsum(ref["pose_present"]) - 1  # frame -> its row among the present ones
    mask_rows = np.cumsum(ref["pose_mask_present"]) - 1
    same, px, vis, mm, ious = [], [], [], [], []
    with Pose(enable_segmentation=True, **options) as pose:
        for i, rgb in enumerate(frames, start):
            r = pose.process(rgb)
            want = bool(ref["pose_present"][i])
            same.append((r.landmarks is not None) == want)
            if r.landmarks is None or not want:
                continue
            lm = ref["pose_landmarks"][present[i]]
            px.extend(np.linalg.norm((r.landmarks[:, :2] - lm[:, :2]) * size, axis=1))
            vis.extend(np.abs(r.visibility - lm[:, 3]))
            mm.extend(1000 * np.linalg.norm(r.world_landmarks - ref["pose_world"][present[i]],
                                            axis=1))  # fmt: skip
            if ref["pose_mask_present"][i]:
                bits = np.unpackbits(ref["pose_mask_bits"][mask_rows[i]])[: w * h]
                want_mask = bits.reshape(h, w).astype(bool)
                got = r.mask > 0.5
                union = (got | want_mask).sum()
                ious.append(float((got & want_mask).sum() / union) if union else 1.0)
    return {"frames": len(same), "count_agree": float(np.mean(same)),
            "landmark_px": _stats(px), "visibility": _stats(vis), "world_mm": _stats(mm),
            "mask_iou": _stats(ious)}  # fmt: skip


def compare_face_mesh(ref: dict, frames, start: int, refine: bool = False, **options) -> dict:
    from engine.vision import FaceMesh

    key = "fmr" if refine else "fm"
    size = np.array(ref["size"], np.float64)
    same, px = [], []
    with FaceMesh(max_num_faces=2, refine_landmarks=refine, **options) as fm:
        for i, rgb in enumerate(frames, start):
            got = fm.process(rgb).faces
            want = ref[f"{key}_landmarks"][ref[f"{key}_frame"] == i]
            same.append(len(got) == len(want))
            if len(got) == len(want):
                for f, lm in zip(got, want, strict=True):
                    px.append(np.linalg.norm((f.landmarks[:, :2] - lm[:, :2]) * size, axis=1))
    px = np.reshape(px, (-1, want.shape[1]))  # faces x landmarks
    metrics = {"frames": len(same), "count_agree": float(np.mean(same)),
               "landmark_px": _stats(px.reshape(-1))}  # fmt: skip
    if refine:
        metrics["iris_px"] = _stats(px[:, 468:].reshape(-1))
    return metrics


def compare_holistic(ref: dict, frames, start: int, **options) -> dict:
    from engine.vision import Holistic

    size = np.array(ref["size"], np.float64)
    parts = {"pose": "pose_landmarks", "left": "left_hand_landmarks",
             "right": "right_hand_landmarks", "face": "face_landmarks"}  # fmt: skip
    rows = {p: np.cumsum(ref[f"ho_{p}_present"]) - 1 for p in parts}
    same = {p: [] for p in parts}
    px = {p: [] for p in parts}
    with Holistic(**options) as holistic:
        for i, rgb in enumerate(frames, start):
            r = holistic.process(rgb)
            for part, attr in parts.items():
                got, want = getattr(r, attr), bool(ref[f"ho_{part}_present"][i])
                same[part].append((got is not None) == want)
                if got is not None and want:
                    lm = ref[f"ho_{part}_landmarks"][rows[part][i]]
                    px[part].extend(np.linalg.norm((got[:, :2] - lm[:, :2]) * size, axis=1))
    everything = [v for p in parts for v in px[p]]
    return {"frames": len(same["pose"]),
            "count_agree": float(min(np.mean(v) for v in same.values())),
            **{f"{p}_agree": float(np.mean(same[p])) for p in parts},
            **{f"{p}_px": _stats(px[p]) for p in parts},
            "landmark_px": _stats(everything)}  # fmt: skip


def compare_holistic_refined(ref: dict, frames, start: int, **options) -> dict:
    from engine.vision import Holistic

    size = np.array(ref["size"], np.float64)
    rows = np.cumsum(ref["hor_face_present"]) - 1
    same, px = [], []
    with Holistic(refine_face_landmarks=True, **options) as holistic:
        for i, rgb in enumerate(frames, start):
            got, want = holistic.process(rgb).face_landmarks, bool(ref["hor_face_present"][i])
            same.append((got is not None) == want)
            if got is not None and want:
                lm = ref["hor_face_landmarks"][rows[i]]
                px.append(np.linalg.norm((got[:, :2] - lm[:, :2]) * size, axis=1))
    px = np.reshape(px, (-1, 478))
    return {"frames": len(same), "count_agree": float(np.mean(same)),
            "landmark_px": _stats(px.reshape(-1)), "iris_px": _stats(px[:, 468:].reshape(-1))}  # fmt: skip


def compare_solution(name: str, ref: dict, frames, start: int, **options) -> dict:
    if name.startswith("hands"):
        return compare_hands(ref, frames, start, int(name[-1]), **options)
    if name == "pose":
        return compare_pose(ref, frames, start, **options)
    if name in ("face_mesh", "face_mesh_refined"):
        return compare_face_mesh(ref, frames, start, name == "face_mesh_refined", **options)
    if name == "holistic":
        return compare_holistic(ref, frames, start, **options)
    if name == "holistic_refined":
        return compare_holistic_refined(ref, frames, start, **options)
    raise ValueError(f"unknown solution {name!r}; known: {', '.join(SOLUTIONS)}")


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


def load_frames(start: int, count: int) -> tuple[dict, list[np.ndarray]]:
    """The references (people_clip.npz's arrays and people_holistic_refined.npz's hor_*) and
    frames [start, start + count) of assets/people.mp4 (RGB)."""
    from engine.catalog.paths import assets_dir

    ref = load_reference(PEOPLE_REFERENCE)
    refined = load_reference(HOLISTIC_REFINED_REFERENCE)
    if not np.array_equal(refined["frame_crc32"], ref["frame_crc32"]):
        raise ClipMismatch(f"{HOLISTIC_REFINED_REFERENCE} and {PEOPLE_REFERENCE}: other frames")
    ref |= {k: v for k, v in refined.items() if k.startswith("hor_")}
    clip = assets_dir() / "people.mp4"
    if not clip.is_file():
        raise FileNotFoundError(f"{clip} is missing: run `engine-fetch samples` (make assets)")
    count = min(count, len(ref["frame_crc32"]) - start)
    frames = clip_frames(clip, ref["frame_crc32"], start + count)
    if len(frames) < start + count:
        raise ClipMismatch(f"{clip}: {len(frames)} frames, the reference has {start + count}")
    return ref, frames[start:]


def format_report(results: dict) -> str:
    lines = []
    for name, m in results.items():
        rows = [[k, f"{v['median']:.4f}", f"{v['p95']:.4f}", f"{v['max']:.4f}", v["n"]]
                for k, v in m.items() if isinstance(v, dict) and v.get("n")]  # fmt: skip
        lines += [f"## {name}: {m['frames']} frames, counts agree on {m['count_agree']:.1%}"
                  + (f", handedness on {m['label_agree']:.1%}" if "label_agree" in m else ""),
                  "", *table(["metric", "median", "p95", "max", "n"], rows, "lrrrr"), ""]  # fmt: skip
        targets = [[k, f"{v:.4f}", t, "yes" if ok else "NO"] for k, v, t, ok in check_targets(m)]
        lines += [*table(["target", "value", "wanted", "met"], targets, "lrll"), ""]
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
    args = ap.parse_args(argv)
    names = [s for s in args.solutions.split(",") if s] or [
        s for s in SOLUTIONS if args.backend != "xnnpack" or s not in REFINED
    ]
    unknown = [n for n in names if n not in SOLUTIONS]
    if unknown:
        print(f"fidelity: unknown solutions {unknown}; known: {', '.join(SOLUTIONS)}",
              file=sys.stderr)  # fmt: skip
        return 2
    try:
        ref, frames = load_frames(args.start, args.frames)
    except (ClipMismatch, FileNotFoundError) as exc:
        print(f"fidelity: {exc}", file=sys.stderr)
        return 2
    from engine.gpu import shared_context

    bench = Bench(__spec__.name, argv)
    bench.use(shared_context(args.adapter))
    results, seconds = {}, {}
    for name in names:
        t = time.perf_counter()
        results[name] = compare_solution(name, ref, frames, args.start, backend=args.backend,
                                         precision=args.precision, adapter=args.adapter)  # fmt: skip
        seconds[name] = time.perf_counter() - t
    doc = {"solutions": results, "seconds": seconds,
           "options": {"start": args.start, "frames": len(frames), "precision": args.precision,
                       "backend": args.backend}}  # fmt: skip
    bench.report(format_report(results), doc, args.json)
    met = all(ok for m in results.values() for *_, ok in check_targets(m))
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
