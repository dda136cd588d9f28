"""Holistic's hands against MediaPipe's own: stage by stage, and over the clip shot by shot.

- input: tests/data/mediapipe/people_holistic_hand_rois.npz (MediaPipe 0.10.14's Holistic
  with its hand subgraph's debug streams, on the people clip, hh_*, and on it perturbed,
  px_hh_*: make_reference.py `--only holistic_hand_rois`), people_clip.npz and the clip
  (benchmarks/fidelity/people.py load_frames)
- output: markdown under the stamp line (benchmarks/common.py), JSON with --json:
  - stages: each stage of engine.vision's Holistic given MediaPipe's own inputs of that stage
    (its pose, its previous frame's hand landmarks, its ROIs), against MediaPipe's output
    of it: the wrist visibility gate, the ROI from the pose, hand_recrop's ROI,
    RoiTrackingCalculator's choice (the tracking ROI), the landmarks on MediaPipe's
    tracking ROI (px, and whether the hand flag is on the same side of 0.5). ROIs apart in
    centre px, side px and rotation degrees;
  - shots (--shots): the engine's Holistic over the frames as a video, and MediaPipe on the
    perturbed clip, each against MediaPipe's run, per shot: pose and hand landmark px
    median, frames where a hand's presence differs, frames where the tracking choice (the
    last frame's ROI kept, or the re-crop) differs of those where both have the hand's ROI
- semantics: the stages call Holistic's own steps (`_hand_rois`, `_landmarks`) with
  MediaPipe's inputs set, so what is compared is the code a run executes
- usage: python -m benchmarks.fidelity.holistic_hands [--start 0] [--frames 300]
         [--backend auto|webgpu|xnnpack] [--shots] [--json out/fidelity_holistic_hands.json]
"""

from __future__ import annotations

import argparse
import sys
from types import SimpleNamespace

import numpy as np

from benchmarks.common import Bench, table
from benchmarks.fidelity.compare import HAND_ROIS_REFERENCE, load_reference
from benchmarks.fidelity.people import load_frames, recorded

SIDES = ("left", "right")
STAGES = ("from_pose", "recrop", "tracking")


def _rect(row):
    from engine.vision.roi import Rect

    return None if np.isnan(row[0]) else Rect(*(float(v) for v in row))


def apart(a, b, size) -> tuple[float, float, float]:
    """Centre (px), side (px) and rotation (degrees) between two ROIs."""
    w, h = size
    return (float(np.hypot((a.x_center - b.x_center) * w, (a.y_center - b.y_center) * h)),
            max(abs(a.width - b.width) * w, abs(a.height - b.height) * h),
            float(np.degrees(abs(a.rotation - b.rotation))))  # fmt: skip


def stages(ref: dict, rois: dict, frames, start: int, **options) -> dict:
    """Per stage the engine's result given MediaPipe's inputs, against MediaPipe's:
    {"from_pose" | "recrop" | "tracking": [(frame, side, centre px, side px, degrees)],
    "gate" | "flags" | "chain": [(frame, side, agrees)], "px": [...]}. "tracking" is
    RoiTrackingCalculator's choice given MediaPipe's previous landmarks and re-crop; "chain"
    the choice after the engine's own re-crop (does it pick MediaPipe's ROI: a choice on
    its bound flips with the re-crop's 0.01 px); a missing ROI where MediaPipe has one (or
    the other way) is a gate disagreement."""
    from engine.vision import Holistic
    from engine.vision.roi import HAND_FROM_POSE_ROI, hand_rect_from_pose, transform_rect
    from engine.vision.solutions.hands import hand_roi_from_landmarks
    from engine.vision.solutions.holistic import HAND_SIDES
    from engine.vision.tracking import HAND_TRACKING

    size = tuple(int(v) for v in ref["size"])
    n = len(frames)
    pose = recorded(ref, "ho_pose", 4, start, n)
    # MediaPipe's hands from the frame before `start`: [k] the previous frame's, [k + 1] its own
    hands = {s: [*([None] if start == 0 else []),
                 *recorded(ref, f"ho_{s}", 3, max(start - 1, 0), n + (start > 0))]
             for s in SIDES}  # fmt: skip
    out: dict = {k: [] for k in (*STAGES, "gate", "flags", "chain", "px")}
    with Holistic(**options) as holistic:
        holistic.prepare(size)
        for k, rgb in enumerate(frames):
            i = start + k
            frame, _ = holistic.backend.frames(rgb)
            want = {st: {s: _rect(rois[f"hh_{s}_hand_{name}"][i]) for s in SIDES}
                    for st, name in zip(STAGES, ("roi_from_pose", "roi_from_recrop",
                                                 "tracking_roi"), strict=True)}  # fmt: skip
            if pose[k] is not None:
                lm = pose[k]
                body = SimpleNamespace(landmarks=lm[:, :3], visibility=lm[:, 3])
                for side, (wrist, pinky, index) in HAND_SIDES.items():
                    if want["from_pose"][side] is not None:
                        rect = hand_rect_from_pose(lm[wrist], lm[pinky], lm[index], size)
                        got = transform_rect(rect, size, HAND_FROM_POSE_ROI)
                        out["from_pose"].append((i, side, *apart(got, want["from_pose"][side],
                                                                 size)))  # fmt: skip
                holistic._previous = {}  # no previous hand: the re-crop itself
                recrops = holistic._hand_rois(frame, size, body)
                holistic._previous = {s: hands[s][k] for s in SIDES if hands[s][k] is not None}
                chain = holistic._hand_rois(frame, size, body)
                for side in SIDES:
                    out["gate"].append((i, side, (side in recrops) ==
                                        (want["recrop"][side] is not None)))  # fmt: skip
                    mp_recrop, mp_track = want["recrop"][side], want["tracking"][side]
                    if side not in recrops or mp_recrop is None:
                        continue
                    out["recrop"].append((i, side, *apart(recrops[side], mp_recrop, size)))
                    chosen = holistic._tracked_or(side, mp_recrop, size, hand_roi_from_landmarks,
                                                  HAND_TRACKING)  # fmt: skip
                    out["tracking"].append((i, side, *apart(chosen, mp_track, size)))
                    out["chain"].append(
                        (i, side, bool(max(apart(chain[side], mp_track, size)) < 1))
                    )
            found = holistic._landmarks(frame, size, {s: r for s, r in want["tracking"].items()
                                                      if r is not None})  # fmt: skip
            for side in SIDES:
                mp_lm = hands[side][k + 1]
                if want["tracking"][side] is None:
                    continue
                out["flags"].append((i, side, bool((side in found) == (mp_lm is not None))))
                if side in found and mp_lm is not None:
                    px = np.linalg.norm((found[side][:, :2] - mp_lm[:, :2]) * size, axis=1)
                    out["px"].extend(px.tolist())
    return out


def stage_rows(out: dict) -> list[list]:
    rows = []
    for st in STAGES:
        a = np.array([r[2:] for r in out[st]]).reshape(-1, 3)
        if not len(a):
            rows.append([st, 0, "-", "-", "-", "-"])
            continue
        rows.append([st, len(a), f"{np.median(a[:, 0]):.4f}", f"{a[:, 0].max():.4f}",
                     f"{a[:, 1].max():.4f}", f"{a[:, 2].max():.4f}"])  # fmt: skip
    px = np.array(out["px"])
    return rows + [["landmarks on MediaPipe's ROI (px)", len(px), f"{np.median(px):.4f}",
                    f"{px.max():.4f}", "-", "-"]]  # fmt: skip


def choices(arrays: dict, prefix: str) -> dict[str, np.ndarray]:
    """MediaPipe's tracking choice per frame and hand: 1 kept the last frame's ROI, 0 took
    the re-crop, -1 no ROI."""
    out = {}
    for side in SIDES:
        track = arrays[f"{prefix}_{side}_hand_tracking_roi"]
        recrop = arrays[f"{prefix}_{side}_hand_roi_from_recrop"]
        kept = np.any(np.abs(track - recrop) > 0, axis=1).astype(int)
        out[side] = np.where(np.isnan(track[:, 0]), -1, kept)
    return out


def engine_run(frames, size, start: int, **options) -> dict:
    """engine.vision's Holistic over `frames` as a video: per frame the pose and hand
    landmarks (NaN when absent) and each hand's tracking choice as `choices` gives it."""
    from engine.vision import Holistic
    from engine.vision.solutions.hands import hand_roi_from_landmarks

    n = len(frames)
    run = {"pose": np.full((n, 33, 3), np.nan), **{s: np.full((n, 21, 3), np.nan) for s in SIDES},
           "choices": {s: np.full(n, -1) for s in SIDES}}  # fmt: skip
    last: dict = {}  # the last frame's landmarks, as the solution keeps them
    with Holistic(**options) as holistic:
        for k, rgb in enumerate(frames):
            r = holistic.process(rgb)
            if r.pose_landmarks is not None:
                run["pose"][k] = r.pose_landmarks
            for side in SIDES:
                if side in r.rois:
                    kept = (
                        side in last and hand_roi_from_landmarks(last[side], size) == r.rois[side]
                    )
                    run["choices"][side][k] = int(kept)
                lm = getattr(r, f"{side}_hand_landmarks")
                if lm is not None:
                    run[side][k] = lm
                    last[side] = lm
                else:
                    last.pop(side, None)
    return run


def _dense(present, landmarks, start: int, n: int) -> np.ndarray:
    rows = np.cumsum(present) - 1
    out = np.full((n, landmarks.shape[1], 3), np.nan)
    for k in range(n):
        if present[start + k]:
            out[k] = landmarks[rows[start + k]][:, :3]
    return out


def shot_rows(ref: dict, rois: dict, run: dict, start: int) -> list[list]:
    """Per shot: the engine's run and MediaPipe's perturbed run against MediaPipe's."""
    from engine.catalog.people import SHOTS, shot_starts

    n = len(run["pose"])
    size = np.array(ref["size"], np.float64)

    def parts(prefix: str) -> dict:
        return {p: _dense(rois[f"{prefix}_{p}_present"], rois[f"{prefix}_{p}_landmarks"],
                          start, n) for p in ("pose", "left_hand", "right_hand")}  # fmt: skip

    want, perturbed = parts("hh"), parts("px_hh")
    for d in (want, perturbed):
        d |= {s: d.pop(f"{s}_hand") for s in SIDES}
    mp_choice = {s: c[start : start + n] for s, c in choices(rois, "hh").items()}
    px_choice = {s: c[start : start + n] for s, c in choices(rois, "px_hh").items()}
    starts = shot_starts()
    spans = [(f"{shot.source} {a}-{b - 1}", max(a, start) - start, min(b, start + n) - start)
             for shot, a, b in zip(SHOTS, starts[:-1], starts[1:], strict=True)]  # fmt: skip
    rows = []
    for name, a, b in [*[s for s in spans if s[1] < s[2]], ("all", 0, n)]:
        sl = slice(a, b)
        cells = [name]
        for part in ("pose", *SIDES):
            pair = []
            for got in (run[part], perturbed[part]):
                both = ~np.isnan(got[sl, 0, 0]) & ~np.isnan(want[part][sl, 0, 0])
                d = np.linalg.norm((got[sl][both][..., :2] - want[part][sl][both][..., :2])
                                   * size, axis=-1)  # fmt: skip
                pair.append(f"{np.median(d):.2f}" if d.size else "-")
            cells.append(" / ".join(pair))
        for side in SIDES:
            pair = []
            for got in (run[side], perturbed[side]):
                pair.append(str(int((np.isnan(got[sl, 0, 0]) !=
                                     np.isnan(want[side][sl, 0, 0])).sum())))  # fmt: skip
            cells.append(" / ".join(pair))
        for side in SIDES:
            pair = []
            for got in (run["choices"][side], px_choice[side]):
                both = (got[sl] >= 0) & (mp_choice[side][sl] >= 0)
                pair.append(f"{int((got[sl][both] != mp_choice[side][sl][both]).sum())} of "
                            f"{int(both.sum())}")  # fmt: skip
            cells.append(" / ".join(pair))
        rows.append(cells)
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--start", type=int, default=0)
    ap.add_argument("--frames", type=int, default=300)
    ap.add_argument("--backend", default="auto", choices=("auto", "webgpu", "xnnpack"))
    ap.add_argument("--shots", action="store_true", help="the engine's whole run per shot too")
    ap.add_argument("--json", default="out/fidelity_holistic_hands.json")
    args = ap.parse_args(argv)
    ref, frames = load_frames(args.start, args.frames)
    rois = load_reference(HAND_ROIS_REFERENCE)
    if not np.array_equal(rois["frame_crc32"], ref["frame_crc32"]):
        print(f"fidelity: {HAND_ROIS_REFERENCE} was made from other frames", file=sys.stderr)
        return 2
    from engine.gpu import shared_context

    bench = Bench(__spec__.name, argv)
    bench.use(shared_context())
    out = stages(ref, rois, frames, args.start, backend=args.backend)
    agree = {k: f"{sum(r[2] for r in out[k])} of {len(out[k])}"
             for k in ("gate", "flags", "chain")}  # fmt: skip
    flips = [r[:2] for r in out["chain"] if not r[2]]
    lines = [f"Given MediaPipe's inputs at each stage, frames {args.start}-"
             f"{args.start + len(frames) - 1}: the wrist gate agrees on {agree['gate']} sides "
             f"of a pose, the hand flag on {agree['flags']} ROIs; after the engine's own "
             f"re-crop the tracking choice is MediaPipe's on {agree['chain']} (other at "
             f"{flips}).", "",
             *table(["stage", "n", "centre px median", "centre px max", "side px max",
                     "rotation deg max"], stage_rows(out), "lrrrrr"), ""]  # fmt: skip
    doc = {"stages": {k: v for k, v in out.items() if k != "px"}, "agree": agree,
           "options": vars(args)}  # fmt: skip
    if args.shots:
        size = tuple(int(v) for v in ref["size"])
        rows = shot_rows(ref, rois, engine_run(frames, size, args.start, backend=args.backend),
                         args.start)  # fmt: skip
        header = ["shot", "pose px median", "left px median", "right px median",
                  "left presence differs", "right presence differs", "left choice differs",
                  "right choice differs"]  # fmt: skip
        lines += ["Over the frames as a video: the engine / MediaPipe on the perturbed clip, "
                  "each against MediaPipe's run.", "", *table(header, rows, "l" * 8), ""]  # fmt: skip
        doc["shots"] = rows
    bench.report("\n".join(lines), doc, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
