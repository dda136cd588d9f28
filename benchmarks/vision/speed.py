"""Frames per second of each engine.vision solution beside MediaPipe 0.10.14's own, on
the same clip and cores, passes interleaved (ours, MediaPipe's, ours, ...).

- input: assets/people.mp4 (engine-fetch samples: real footage with cuts), its first
  FRAMES frames decoded into memory first (decode is not timed, for either)
- each pass: a fresh solution (ours in this process, MediaPipe's in its side venv,
  benchmarks/vision/mediapipe_solutions.py), one untimed first frame (start-up), then
  the other frames as a video; frames/s = frames / seconds, the best and the median pass
- output: a markdown table (solution, ours, MediaPipe's, ratio) under the stamp line
  (benchmarks/common.py: adapter, load before and after), and JSON
- options: --backend auto|webgpu|xnnpack (engine/vision/backends; auto: the solutions'
  default on this adapter, the table says which ran)
- usage: python -m benchmarks.vision.speed [--solutions hands,pose,face_mesh,holistic,
         face_detection,selfie_segmentation] [--frames 90] [--passes 3] [--backend auto]
         [--json out/solutions_speed.json] [--mp-python PATH]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from benchmarks.common import Bench, table

PEER = Path(__file__).resolve().parent / "mediapipe_solutions.py"
OURS = {
    "hands": ("Hands", {"max_num_hands": 2, "model_complexity": 1}),
    "pose": ("Pose", {"model_complexity": 1}),
    "face_mesh": ("FaceMesh", {"max_num_faces": 2}),
    "holistic": ("Holistic", {"model_complexity": 1}),
    "face_detection": ("FaceDetector", {}),
    "selfie_segmentation": ("SelfieSegmenter", {}),
}


def clip_rgb(clip: Path, count: int) -> list[np.ndarray]:
    import cv2

    cap = cv2.VideoCapture(str(clip))
    frames = []
    while len(frames) < count:
        ok, bgr = cap.read()
        if not ok:
            break
        frames.append(cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB))
    return frames


def our_pass(name: str, frames: list[np.ndarray], ctx, backend: str = "auto") -> tuple:
    """(seconds, the backend that ran) of one pass."""
    import engine.vision as vision

    cls, options = OURS[name]
    with getattr(vision, cls)(context=ctx, backend=backend, **options) as solution:
        solution.process(frames[0])  # start-up (engines built in the constructor) untimed
        t = time.perf_counter()
        for frame in frames[1:]:
            solution.process(frame)
        return time.perf_counter() - t, solution.backend.name


def mediapipe_pass(python: str, name: str, clip: Path, count: int) -> float:
    proc = subprocess.run([python, str(PEER), name, str(clip), str(count), "1"],
                          capture_output=True, text=True, check=True)  # fmt: skip
    return json.loads(proc.stdout.strip().splitlines()[-1])["passes"][0]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--solutions", default=",".join(OURS))
    ap.add_argument("--frames", type=int, default=90)
    ap.add_argument("--passes", type=int, default=3)
    ap.add_argument("--json", default="out/solutions_speed.json")
    ap.add_argument("--mp-python", default=None, help="the side venv's python (made if absent)")
    ap.add_argument("--backend", default="auto", choices=("auto", "webgpu", "xnnpack"))
    args = ap.parse_args(argv)
    names = [n for n in args.solutions.split(",") if n]
    unknown = [n for n in names if n not in OURS]
    if unknown or args.frames < 2 or args.passes < 1:
        print(f"speed: solutions from {', '.join(OURS)}; --frames >= 2, --passes >= 1",
              file=sys.stderr)  # fmt: skip
        return 2
    from benchmarks.app.mediapipe_compare import mediapipe_python
    from engine.catalog.paths import assets_dir
    from engine.gpu import shared_context

    clip = assets_dir() / "people.mp4"
    frames = clip_rgb(clip, args.frames)
    python = mediapipe_python(args.mp_python)
    bench = Bench(__spec__.name, argv)
    ctx = bench.use(shared_context())
    rows, doc = [], {"frames": len(frames) - 1, "backend": args.backend, "solutions": {}}
    ran = set()
    for name in names:
        ours, theirs = [], []
        for _ in range(args.passes):  # interleaved: a neighbour's load hits both alike
            seconds, backend = our_pass(name, frames, ctx, args.backend)
            ours.append(seconds)
            ran.add(backend)
            theirs.append(mediapipe_pass(python, name, clip, len(frames)))
        n = len(frames) - 1
        fps_ours, fps_mp = n / min(ours), n / min(theirs)
        doc["solutions"][name] = {"ours_s": ours, "mediapipe_s": theirs,
                                  "ours_fps_best": fps_ours, "mediapipe_fps_best": fps_mp}  # fmt: skip
        rows.append([name, f"{fps_ours:.1f}", f"{n / float(np.median(ours)):.1f}",
                     f"{fps_mp:.1f}", f"{n / float(np.median(theirs)):.1f}",
                     f"{fps_ours / fps_mp:.2f}x"])  # fmt: skip
    text = "\n".join([
        f"{len(frames) - 1} frames of {clip.name} per pass, {args.passes} passes each, "
        f"interleaved; MediaPipe 0.10.14 on the CPU (XNNPACK), ours on "
        f"{' and '.join(sorted(ran))} (--backend {args.backend}; adapter {ctx.name})", "",
        *table(["solution", "ours fps (best)", "ours (median)", "MediaPipe fps (best)",
                "MediaPipe (median)", "ours / MediaPipe"], rows, "lrrrrr"),
    ])  # fmt: skip
    bench.report(text, doc, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
