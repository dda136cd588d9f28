"""Fidelity against MediaPipe 0.10.14: the solutions on the sample clip vs MediaPipe's own.

- input: tests/data/mediapipe/sample_clip.npz (tests/data/mediapipe/make_reference.py made it
  from MediaPipe's Python solutions) and assets/sample.mp4 (the frames are checked against
  the reference's CRCs: another decoder could give other pixels)
- output: a markdown table (metric, value, target, pass) under the stamp line
  (benchmarks/common.py) and JSON (--json: the stamp and the metrics)
- metrics: face detection box IoU (best detection vs the reference's best match) and
  keypoint pixel error; face mesh landmark pixel error (x, y) over every landmark of every
  frame where both see the face; mask IoU at 0.5; frames where presence differs
- usage: python -m benchmarks.fidelity.compare [--frames 300] [--json out/fidelity.json]
         [--precision fp16] [--storage texture] [--adapter NAME] [--backend auto|webgpu|xnnpack]
"""

from __future__ import annotations

import argparse
import sys
import time
import zlib
from pathlib import Path

import numpy as np

from benchmarks.common import ROOT, Bench, table

DATA = ROOT / "tests" / "data" / "mediapipe"
REFERENCE = DATA / "sample_clip.npz"
# The people clip the references below were made from, kept beside them: a render of it
# (engine/catalog/people.py, assets/people.mp4) is not the same file on every machine (on
# an AVX-512 Xeon with PyAV 18.1 and OpenCV 5.0 its frames differ from frame 49 on), while
# a stored H.264 file decodes to the same frames everywhere (its CRCs are checked)
PEOPLE_CLIP = DATA / "people.mp4"
# Hands, Pose, Holistic, several faces on PEOPLE_CLIP (make_reference.py says what)
PEOPLE_REFERENCE = DATA / "people_clip.npz"
# Holistic(refine_face_landmarks=True)'s face on the same clip: the hor_* arrays
HOLISTIC_REFINED_REFERENCE = DATA / "people_holistic_refined.npz"
# MediaPipe's Pose and Holistic there restarted at each cut (resync_*) and with frames 1 us
# further apart (jitter_*): make_reference.py's VARIANTS
POSE_VARIANTS_REFERENCE = DATA / "people_pose_variants.npz"
# the options people_clip.npz lacks: Pose and Holistic model_complexity 0 and 2, selfie
# segmentation (model_selection 0 and 1) on PEOPLE_CLIP
OPTIONS_REFERENCE = DATA / "people_options.npz"
# MediaPipe's runs of all the above on PEOPLE_CLIP perturbed (two pixels of each frame one
# 8-bit level: make_reference.py `perturb`), the face meshes apart: the yardstick's floor
PERTURBED_REFERENCE = DATA / "people_perturbed.npz"
PERTURBED_FACES_REFERENCE = DATA / "people_perturbed_faces.npz"
# MediaPipe's Holistic there (as people_clip.npz's ho_*) with its hand subgraph's ROIs
HAND_ROIS_REFERENCE = DATA / "people_holistic_hand_rois.npz"

# the targets: (metric, comparison, threshold)
TARGETS = (
    ("detection.box_iou.median", ">=", 0.98),
    ("detection.box_iou.p1", ">=", 0.9),  # >= 0.9 on 99 % of the frames
    ("detection.presence_agree", ">=", 0.99),
    ("mesh.presence_agree", ">=", 0.99),
    ("mesh.landmark_px.median", "<=", 1.0),
    ("mesh.landmark_px.p95", "<=", 3.0),
    ("segmentation.mask_iou.median", ">=", 0.99),
)


class ClipMismatch(Exception):
    """The clip does not decode to the frames the reference was made from."""


def load_reference(path: str | Path = REFERENCE) -> dict[str, np.ndarray]:
    with np.load(path) as d:
        return {k: d[k] for k in d.files}


def clip_frames(clip: str | Path, crcs: np.ndarray, count: int) -> list[np.ndarray]:
    """The clip's first `count` frames as RGB, each checked against the reference's CRC."""
    import cv2

    cap = cv2.VideoCapture(str(clip))
    frames = []
    while len(frames) < count:
        ok, bgr = cap.read()
        if not ok:
            break
        if zlib.crc32(np.ascontiguousarray(bgr).tobytes()) != int(crcs[len(frames)]):
            cap.release()
            raise ClipMismatch(
                f"{clip}: frame {len(frames)} differs from the one MediaPipe's reference saw "
                f"(another clip or decoder); remake it: python -m tests.data.mediapipe.make_reference"
            )
        frames.append(np.ascontiguousarray(bgr[:, :, ::-1]))
    cap.release()
    return frames


def run_ours(frames: list[np.ndarray], **options) -> dict:
    """The three solutions over `frames` in order (FaceMesh tracking as a video), in the
    reference's schema; `options` go to every solution (engine options)."""
    from engine.vision import FaceDetector, FaceMesh, SelfieSegmenter

    out: dict = {"fd": [], "fm": [], "ss": [], "seconds": {}, "fm_detector_frames": 0}
    t0 = time.perf_counter()
    with FaceDetector(**options) as fd:
        for i, f in enumerate(frames):
            dets = fd.process(f, round(i * 1000 / 30)).detections
            out["fd"].append([(d.score, d.box, d.keypoints) for d in dets])
    t1 = time.perf_counter()
    with FaceMesh(**options) as fm:
        for i, f in enumerate(frames):
            res = fm.process(f, round(i * 1000 / 30))
            out["fm"].append(res.faces[0].landmarks if res.faces else None)
            out["fm_detector_frames"] += res.detections is not None
    t2 = time.perf_counter()
    with SelfieSegmenter(**options) as ss:
        for i, f in enumerate(frames):
            out["ss"].append(ss.process(f, round(i * 1000 / 30)).mask > 0.5)
    t3 = time.perf_counter()
    out["seconds"] = {"detection": t1 - t0, "mesh": t2 - t1, "segmentation": t3 - t2}
    return out


def box_iou(a: np.ndarray, b: np.ndarray) -> float:
    ix = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    iy = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = ix * iy
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return float(inter / union) if union > 0 else 0.0


def _stats(values) -> dict:
    v = np.asarray(values, np.float64)
    if v.size == 0:
        return {"n": 0}
    p = np.percentile(v, [1, 5, 50, 95, 99])
    return {"n": int(v.size), "mean": float(v.mean()), "min": float(v.min()),
            "p1": float(p[0]), "p5": float(p[1]), "median": float(p[2]), "p95": float(p[3]),
            "p99": float(p[4]), "max": float(v.max())}  # fmt: skip


def compare(ref: dict, ours: dict) -> dict:
    """Every metric of the module docstring over the frames `ours` holds."""
    n = len(ours["fd"])
    size = np.array(ref["size"], np.float64)
    # face detection: our best detection against the reference's best-overlapping one
    ious, kp_err, presence, count_same = [], [], [], []
    for i in range(n):
        sel = ref["fd_frame"] == i
        ref_boxes, ref_kps = ref["fd_box"][sel], ref["fd_keypoints"][sel]
        mine = ours["fd"][i]
        presence.append(bool(mine) == bool(len(ref_boxes)))
        count_same.append(len(mine) == len(ref_boxes))
        if mine and len(ref_boxes):
            _, box, kps = mine[0]
            overlaps = [box_iou(box * np.tile(size, 2), r * np.tile(size, 2)) for r in ref_boxes]
            j = int(np.argmax(overlaps))
            ious.append(overlaps[j])
            kp_err.append(float(np.linalg.norm((kps - ref_kps[j]) * size, axis=1).mean()))
    # face mesh
    ref_lm = iter(ref["fm_landmarks"])
    lm_err, frame_err, z_err, mesh_presence = [], [], [], []
    for i in range(n):
        want = next(ref_lm) if ref["fm_present"][i] else None
        got = ours["fm"][i]
        mesh_presence.append((got is None) == (want is None))
        if got is not None and want is not None:
            err = np.linalg.norm((got[:, :2] - want[:, :2]) * size, axis=1)
            lm_err.extend(err.tolist())
            frame_err.append(float(err.mean()))
            z_err.extend(np.abs(got[:, 2] - want[:, 2]) * size[0])
    # segmentation
    w, h = (int(v) for v in ref["size"])
    mask_iou = []
    for i in range(n):
        want = np.unpackbits(ref["ss_mask_bits"][i])[: w * h].reshape(h, w).astype(bool)
        got = ours["ss"][i]
        union = (got | want).sum()
        mask_iou.append(float((got & want).sum() / union) if union else 1.0)
    return {
        "frames": n,
        "mediapipe_version": str(ref["mediapipe_version"]),
        "detection": {
            "box_iou": _stats(ious),
            "keypoint_px": _stats(kp_err),
            "presence_agree": float(np.mean(presence)),
            "presence_differs": int(n - np.sum(presence)),
            "count_agree": float(np.mean(count_same)),
        },
        "mesh": {
            "landmark_px": _stats(lm_err),
            "frame_mean_px": _stats(frame_err),
            "z_px": _stats(z_err),
            "presence_agree": float(np.mean(mesh_presence)),
            "presence_differs": int(n - np.sum(mesh_presence)),
            "detector_frames": int(ours.get("fm_detector_frames", 0)),
        },
        "segmentation": {"mask_iou": _stats(mask_iou)},
    }


def lookup(metrics: dict, key: str) -> float:
    v = metrics
    for part in key.split("."):
        v = v[part]
    return float(v)


def check_targets(metrics: dict) -> list[tuple[str, float, str, bool]]:
    """(metric, value, target, met) for each of TARGETS."""
    rows = []
    for key, op, threshold in TARGETS:
        value = lookup(metrics, key)
        ok = value >= threshold if op == ">=" else value <= threshold
        rows.append((key, value, f"{op} {threshold:g}", bool(ok)))
    return rows


def format_table(metrics: dict) -> str:
    d, m, s = metrics["detection"], metrics["mesh"], metrics["segmentation"]
    stats = [
        ("face detection", "box IoU", d["box_iou"], "p1", "min"),
        ("face detection", "keypoint error px (mean of 6)", d["keypoint_px"], "p99", "max"),
        ("face mesh", "landmark error px (all 468)", m["landmark_px"], "p99", "max"),
        ("face mesh", "z error px", m["z_px"], "p99", "max"),
        ("selfie segmentation", "mask IoU (0.5)", s["mask_iou"], "p1", "min"),
    ]
    rows = []
    for name, metric, st, tail, extreme in stats:
        if st["n"] == 0:
            rows.append([name, metric, "-", "-", "-", "-", 0])
            continue
        rows.append([name, metric, f"{st['median']:.4f}", f"{st['p95']:.4f}",
                     f"{st[tail]:.4f}", f"{st[extreme]:.4f}", st["n"]])  # fmt: skip
    targets = [[key, f"{value:.4f}", target, "yes" if ok else "NO"]
               for key, value, target, ok in check_targets(metrics)]  # fmt: skip
    return "\n".join([
        f"{metrics['frames']} frames vs MediaPipe {metrics['mediapipe_version']}", "",
        *table(["solution", "metric", "median", "p95", "p99 / p1", "max / min", "frames"], rows,
               "llrrrrr"), "",
        f"presence differs: face detection {d['presence_differs']} frames, face mesh "
        f"{m['presence_differs']} frames; detection count agrees on {d['count_agree']:.1%}; "
        f"face mesh ran the detector on {m['detector_frames']} frames (tracking on the others)",
        "", *table(["target", "value", "wanted", "met"], targets, "lrll"),
    ])  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--frames", type=int, default=300)
    ap.add_argument("--reference", default=str(REFERENCE))
    ap.add_argument("--clip", default=None, help="default: assets/sample.mp4")
    ap.add_argument("--json", default="out/fidelity.json")
    ap.add_argument("--precision", default="fp32")
    ap.add_argument("--storage", default="auto")
    ap.add_argument("--adapter", default=None)
    ap.add_argument("--backend", default="auto", choices=("auto", "webgpu", "xnnpack"))
    args = ap.parse_args(argv)
    from engine.catalog.paths import assets_dir

    ref = load_reference(args.reference)
    clip = args.clip or assets_dir() / "sample.mp4"
    try:
        frames = clip_frames(clip, ref["frame_crc32"], min(args.frames, len(ref["frame_crc32"])))
    except ClipMismatch as exc:
        print(f"fidelity: {exc}", file=sys.stderr)
        return 2
    from engine.gpu import shared_context

    bench = Bench(__spec__.name, argv)
    bench.use(shared_context(args.adapter))  # the context the solutions share
    ours = run_ours(frames, precision=args.precision, storage=args.storage, adapter=args.adapter,
                    backend=args.backend)  # fmt: skip
    metrics = compare(ref, ours)
    metrics["options"] = {"precision": args.precision, "storage": args.storage,
                          "adapter": args.adapter, "backend": args.backend,
                          "seconds": ours["seconds"]}  # fmt: skip
    bench.report(format_table(metrics), metrics, args.json)
    return 0 if all(ok for *_, ok in check_targets(metrics)) else 1


if __name__ == "__main__":
    sys.exit(main())
