"""Fidelity on real footage: Hands, Pose, two-face FaceMesh (468 and 478 refined landmarks)
and Holistic vs MediaPipe 0.10.14's own.

- input: tests/data/mediapipe/people_clip.npz and people_holistic_refined.npz
  (tests/data/mediapipe/make_reference.py made them from MediaPipe's Python solutions in
  a side venv) and the clip they were made from (tests/data/mediapipe/people.mp4, a render of
  engine-fetch samples' assets/people.mp4 kept in the repository: six shots with cuts; every
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
- targets: counts and handedness agree on >= 99 % of frames, landmarks median
  <= 1 px and p95 <= 3 px, pose world landmarks median <= 5 mm, masks IoU median >= 0.99
- two other comparisons for Pose and Holistic (people_pose_variants.npz): --reference
  resync, both restarted at each cut (the shots apart from what tracking carries over a
  cut); --spread, no engine: MediaPipe with frames 1 us further apart against its own run,
  the spread of MediaPipe's tracking on the clip (docs/vision.md, Fidelity)
- usage: python -m benchmarks.fidelity.people [--solutions hands1,hands0,pose,face_mesh,...]
         [--start 0] [--frames 300] [--json out/fidelity_people.json] [--precision fp16]
         [--backend auto|webgpu|xnnpack]  (the solutions' backend: engine/vision/backends)
         [--reference mediapipe|resync] [--spread]
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from benchmarks.common import Bench, table
from benchmarks.fidelity.compare import (
    HOLISTIC_REFINED_REFERENCE,
    PEOPLE_CLIP,
    PEOPLE_REFERENCE,
    POSE_VARIANTS_REFERENCE,
    ClipMismatch,
    clip_frames,
    load_reference,
)

SOLUTIONS = ("hands1", "hands0", "pose", "face_mesh", "face_mesh_refined", "holistic",
             "holistic_refined")  # fmt: skip
# the solutions people_pose_variants.npz holds: --reference resync and --spread take these
RESYNC = ("pose", "holistic")
COMPARISONS = {
    "mediapipe": "MediaPipe's run from the clip's first frame (people_clip.npz)",
    "resync": "MediaPipe restarted at each cut, as the solution is here (each shot from both "
              "fresh states; people_pose_variants.npz resync_*)",
}  # fmt: skip
SPREAD = ("no engine: MediaPipe's own run with frames 33334 us apart instead of 33333 against "
          "its run from the clip's first frame (people_pose_variants.npz jitter_*)")  # fmt: skip
# face_landmark_with_attention's: on webgpu only (engine/vision/backends needs_webgpu)
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


def compare_pose(ref: dict, frames, start: int, cuts=(), **options) -> dict:
    from engine.vision import Pose

    results = restarted(lambda: Pose(enable_segmentation=True, **options), frames, start, cuts)
    return pose_metrics(ref, results, start)


def pose_metrics(ref: dict, results, start: int) -> dict:
    """Pose's metrics of `results` (frames from `start`; each with landmarks, visibility,
    world_landmarks, mask as PoseResult has them) against the reference's pose_* arrays."""
    size = np.array(ref["size"], np.float64)
    w, h = (int(v) for v in ref["size"])
    present = np.cumsum(ref["pose_present"]) - 1  # frame -> its row among the present ones
    mask_rows = np.cumsum(ref["pose_mask_present"]) - 1
    same, px, vis, mm, ious = [], [], [], [], []
    for i, r in enumerate(results, start):
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


def compare_holistic(ref: dict, frames, start: int, cuts=(), **options) -> dict:
    from engine.vision import Holistic

    return holistic_metrics(ref, restarted(lambda: Holistic(**options), frames, start, cuts),
                            start)  # fmt: skip


HOLISTIC_PARTS = {"pose": "pose_landmarks", "left": "left_hand_landmarks",
                  "right": "right_hand_landmarks", "face": "face_landmarks"}  # fmt: skip


def holistic_metrics(ref: dict, results, start: int) -> dict:
    """Holistic's metrics of `results` (frames from `start`; each with HolisticResult's
    pose_landmarks, left_hand_landmarks, right_hand_landmarks, face_landmarks) against the
    reference's ho_* arrays."""
    size = np.array(ref["size"], np.float64)
    rows = {p: np.cumsum(ref[f"ho_{p}_present"]) - 1 for p in HOLISTIC_PARTS}
    same = {p: [] for p in HOLISTIC_PARTS}
    px = {p: [] for p in HOLISTIC_PARTS}
    for i, r in enumerate(results, start):
        for part, attr in HOLISTIC_PARTS.items():
            got, want = getattr(r, attr), bool(ref[f"ho_{part}_present"][i])
            same[part].append((got is not None) == want)
            if got is not None and want:
                lm = ref[f"ho_{part}_landmarks"][rows[part][i]]
                px[part].extend(np.linalg.norm((got[:, :2] - lm[:, :2]) * size, axis=1))
    everything = [v for p in HOLISTIC_PARTS for v in px[p]]
    return {"frames": len(same["pose"]),
            "count_agree": float(min(np.mean(v) for v in same.values())),
            **{f"{p}_agree": float(np.mean(same[p])) for p in HOLISTIC_PARTS},
            **{f"{p}_px": _stats(px[p]) for p in HOLISTIC_PARTS},
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


def compare_solution(name: str, ref: dict, frames, start: int, cuts=(), **options) -> dict:
    """`name`'s metrics over `frames` (from `start`) against `ref`; Pose and Holistic
    restart at each frame of `cuts` (the others take none)."""
    if cuts and name not in RESYNC:
        raise ValueError(f"{name}: only {', '.join(RESYNC)} restart at cuts")
    if name.startswith("hands"):
        return compare_hands(ref, frames, start, int(name[-1]), **options)
    if name == "pose":
        return compare_pose(ref, frames, start, cuts, **options)
    if name in ("face_mesh", "face_mesh_refined"):
        return compare_face_mesh(ref, frames, start, name == "face_mesh_refined", **options)
    if name == "holistic":
        return compare_holistic(ref, frames, start, cuts, **options)
    if name == "holistic_refined":
        return compare_holistic_refined(ref, frames, start, **options)
    raise ValueError(f"unknown solution {name!r}; known: {', '.join(SOLUTIONS)}")


def recorded(variant: dict, key: str, width: int, start: int, count: int) -> list:
    """A stored run's `key` landmarks (its K_present / K_landmarks arrays), frame by frame
    from `start`: an array, or None where it found nothing; `width` columns kept."""
    rows = np.cumsum(variant[f"{key}_present"]) - 1
    return [variant[f"{key}_landmarks"][rows[i]][:, :width] if variant[f"{key}_present"][i]
            else None for i in range(start, start + count)]  # fmt: skip


def mediapipe_spread(name: str, ref: dict, jitter: dict, start: int, count: int) -> dict:
    """`name`'s metrics of MediaPipe's own run with frames 1 us further apart (the variant
    file's jitter_* arrays, prefix removed) against the reference: no engine runs."""
    from types import SimpleNamespace

    if name == "pose":
        lm = recorded(jitter, "pose", 4, start, count)
        rows = np.cumsum(jitter["pose_present"]) - 1
        mask_rows = np.cumsum(jitter["pose_mask_present"]) - 1
        w, h = (int(v) for v in jitter["size"])
        results = [SimpleNamespace(
            landmarks=None if p is None else p[:, :3], visibility=None if p is None else p[:, 3],
            world_landmarks=None if p is None else jitter["pose_world"][rows[i]],
            mask=None if not jitter["pose_mask_present"][i] else
            np.unpackbits(jitter["pose_mask_bits"][mask_rows[i]])[: w * h].reshape(h, w),
        ) for i, p in enumerate(lm, start)]  # fmt: skip
        return pose_metrics(ref, results, start)
    if name == "holistic":
        parts = {attr: recorded(jitter, f"ho_{p}", 3, start, count)
                 for p, attr in HOLISTIC_PARTS.items()}  # fmt: skip
        results = [SimpleNamespace(**{a: v[k] for a, v in parts.items()}) for k in range(count)]
        return holistic_metrics(ref, results, start)
    raise ValueError(f"{name}: MediaPipe's spread is stored for {', '.join(RESYNC)} only")


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


def load_frames(start: int, count: int) -> tuple[dict, list[np.ndarray]]:
    """The references (people_clip.npz's arrays and people_holistic_refined.npz's hor_*) and
    frames [start, start + count) of the clip they were made from (compare.PEOPLE_CLIP, RGB)."""
    ref = load_reference(PEOPLE_REFERENCE)
    refined = load_reference(HOLISTIC_REFINED_REFERENCE)
    if not np.array_equal(refined["frame_crc32"], ref["frame_crc32"]):
        raise ClipMismatch(f"{HOLISTIC_REFINED_REFERENCE} and {PEOPLE_REFERENCE}: other frames")
    ref |= {k: v for k, v in refined.items() if k.startswith("hor_")}
    clip = PEOPLE_CLIP
    if not clip.is_file():
        raise FileNotFoundError(f"{clip} is missing (it is kept in the repository)")
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
    ap.add_argument("--reference", default="mediapipe", choices=sorted(COMPARISONS),
                    help="; ".join(f"{k}: {v}" for k, v in COMPARISONS.items()))  # fmt: skip
    ap.add_argument("--spread", action="store_true", help=SPREAD)
    args = ap.parse_args(argv)
    variant = args.reference != "mediapipe" or args.spread
    if args.reference != "mediapipe" and args.spread:
        ap.error("--spread compares with the default reference only")
    names = [s for s in args.solutions.split(",") if s] or [
        s for s in (RESYNC if variant else SOLUTIONS)
        if args.backend != "xnnpack" or s not in REFINED
    ]  # fmt: skip
    known = RESYNC if variant else SOLUTIONS
    unknown = [n for n in names if n not in known]
    if unknown:
        print(f"fidelity: unknown solutions {unknown} here; known: {', '.join(known)}",
              file=sys.stderr)  # fmt: skip
        return 2
    try:
        ref, frames = load_frames(args.start, args.frames)
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
    results, seconds = {}, {}
    jitter = load_variant("jitter") if args.spread else None
    for name in names:
        t = time.perf_counter()
        if jitter is not None:
            results[name] = mediapipe_spread(name, ref, jitter, args.start, len(frames))
        else:
            results[name] = compare_solution(name, ref, frames, args.start, cuts,
                                             backend=args.backend, precision=args.precision,
                                             adapter=args.adapter)  # fmt: skip
        seconds[name] = time.perf_counter() - t
    against = SPREAD if args.spread else COMPARISONS[args.reference]
    doc = {"solutions": results, "seconds": seconds,
           "options": {"start": args.start, "frames": len(frames), "precision": args.precision,
                       "backend": args.backend, "reference": args.reference,
                       "spread": args.spread}}  # fmt: skip
    bench.report(f"Against {against}.\n\n" + format_report(results), doc, args.json)
    met = all(ok for m in results.values() for *_, ok in check_targets(m))
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
