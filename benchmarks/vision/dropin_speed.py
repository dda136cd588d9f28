"""Frames per second of the MediaPipe drop-in (`from engine.vision import mediapipe as mp`)
beside engine.vision's native API and MediaPipe 0.10.14 itself, on the same frames and
cores, rounds interleaved.

- input: the people clip (tests/data/mediapipe/people.mp4, the migration test's), its
  first FRAMES frames decoded into memory as RGB first (decode is not timed)
- solutions: each with the options of its migration script's video loop
  (tests/data/mediapipe/migration/: MediaPipe's documented examples), plus the face mesh
  without refine_landmarks (the examples refine it: face_landmark_with_attention, on
  xnnpack as LiteRT segments around its custom ops)
- contenders, one pass each per round (a fresh solution, one untimed first frame: the
  start-up; then the other frames as a video, `process(rgb)` each, results unread):
  - dropin: `mp.solutions.<module>.<Class>(**options)` of the drop-in, in this process;
  - native: the engine.vision class the drop-in wraps, with the same options;
  - mediapipe: the very loop of `dropin` (`solution_pass`) on MediaPipe's `mp`, this file
    run with --worker in the side venv (a child process per pass)
- rounds: after WARMUP untimed passes of the two in this process (imports, caches), the
  contenders' order alternating (benchmarks.common.alternating), so that a neighbour's
  load lands on each alike; fps = frames / seconds of the best and the median pass;
  threads: the drop-in and native solutions' default (XNNPACK on every CPU core) or
  --num-threads, MediaPipe's own (one XNNPACK thread per model on Linux, its graph's
  calculators in parallel), all on the same cores
- output: a markdown table (fps per contender, drop-in / MediaPipe, drop-in / native)
  under the stamp line (benchmarks/common.py: command, commit, adapter, load before and
  after), and JSON
- usage: python -m benchmarks.vision.dropin_speed [--solutions hands,pose,...] [--frames 90]
         [--rounds 3] [--warmup 1] [--num-threads N] [--json out/dropin_speed.json]
         [--mp-python PATH]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

# name -> (module of mp.solutions, class, the migration script's options, native class)
SOLUTIONS = {
    "face_detection": ("face_detection", "FaceDetection",
                       {"model_selection": 0, "min_detection_confidence": 0.5}, "FaceDetector"),
    "face_mesh": ("face_mesh", "FaceMesh",
                  {"max_num_faces": 1, "refine_landmarks": True, "min_detection_confidence": 0.5,
                   "min_tracking_confidence": 0.5}, "FaceMesh"),
    "face_mesh_unrefined": ("face_mesh", "FaceMesh",
                            {"max_num_faces": 1, "min_detection_confidence": 0.5,
                             "min_tracking_confidence": 0.5}, "FaceMesh"),
    "hands": ("hands", "Hands",
              {"model_complexity": 0, "min_detection_confidence": 0.5,
               "min_tracking_confidence": 0.5}, "Hands"),
    "pose": ("pose", "Pose", {"min_detection_confidence": 0.5, "min_tracking_confidence": 0.5},
             "Pose"),
    "holistic": ("holistic", "Holistic",
                 {"min_detection_confidence": 0.5, "min_tracking_confidence": 0.5}, "Holistic"),
    "selfie_segmentation": ("selfie_segmentation", "SelfieSegmentation",
                            {"model_selection": 1}, "SelfieSegmenter"),
}  # fmt: skip
CONTENDERS = ("dropin", "native", "mediapipe")


def clip_rgb(clip: str, count: int) -> list:
    """The clip's first `count` frames, RGB (both sides decode with their own OpenCV, which
    is the same version: the migration fixtures check the frames by CRC)."""
    import cv2

    cap = cv2.VideoCapture(clip)
    frames = []
    while len(frames) < count:
        ok, bgr = cap.read()
        if not ok:
            break
        frames.append(cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB))
    cap.release()
    return frames


def timed_pass(solution, frames: list) -> float:
    """Seconds for frames[1:] as a video, after an untimed first frame; closes `solution`."""
    with solution:
        solution.process(frames[0])  # the start-up (graph, engines, pipelines) untimed
        t = time.perf_counter()
        for frame in frames[1:]:
            solution.process(frame)
        return time.perf_counter() - t


def solution_pass(mp, name: str, frames: list) -> float:
    """One pass of a MediaPipe script's loop on `mp` (MediaPipe's, or the drop-in's)."""
    module, cls, options, _ = SOLUTIONS[name]
    return timed_pass(getattr(getattr(mp.solutions, module), cls)(**options), frames)


def native_pass(name: str, frames: list, engine_options: dict) -> tuple[float, str]:
    """(seconds, the backend that ran) of one pass of the native engine.vision class."""
    import engine.vision as vision

    _, _, options, cls = SOLUTIONS[name]
    solution = getattr(vision, cls)(**options, **engine_options)
    backend = solution.backend.name
    return timed_pass(solution, frames), backend


def worker(name: str, clip: str, count: int) -> None:
    """In the side venv: one pass of MediaPipe's own solution; prints {"seconds": s}."""
    import mediapipe as mp

    frames = clip_rgb(clip, count)
    print(json.dumps({"seconds": solution_pass(mp, name, frames), "version": mp.__version__}))


def mediapipe_pass(python: str, name: str, clip: Path, count: int) -> float:
    cmd = [python, str(Path(__file__).resolve()), "--worker", name, str(clip), str(count)]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=True)
    return json.loads(proc.stdout.strip().splitlines()[-1])["seconds"]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--solutions", default=",".join(SOLUTIONS))
    ap.add_argument("--frames", type=int, default=90)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--warmup", type=int, default=1, help="untimed passes of the in-process two")
    ap.add_argument("--json", default="out/dropin_speed.json")
    ap.add_argument("--mp-python", default=None, help="the side venv's python (made if absent)")
    ap.add_argument(
        "--num-threads",
        type=int,
        default=None,
        help="XNNPACK threads of the drop-in and native solutions (default: theirs)",
    )
    ap.add_argument("--worker", nargs=3, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        worker(args.worker[0], args.worker[1], int(args.worker[2]))
        return 0
    names = [n for n in args.solutions.split(",") if n]
    unknown = [n for n in names if n not in SOLUTIONS]
    if unknown or args.frames < 2 or args.rounds < 1:
        print(f"dropin_speed: solutions from {', '.join(SOLUTIONS)}; --frames >= 2, "
              "--rounds >= 1", file=sys.stderr)  # fmt: skip
        return 2
    import numpy as np

    from benchmarks.app.mediapipe_compare import mediapipe_python
    from benchmarks.common import ROOT, Bench, alternating, table
    from engine.gpu import shared_context
    from engine.vision import mediapipe as mp

    clip = ROOT / "tests" / "data" / "mediapipe" / "people.mp4"
    frames = clip_rgb(str(clip), args.frames)
    python = mediapipe_python(args.mp_python)
    bench = Bench(__spec__.name, argv)
    ctx = bench.use(shared_context())
    n = len(frames) - 1
    engine = {} if args.num_threads is None else {"num_threads": args.num_threads}
    mp.engine_options(**engine)  # the drop-in's solutions get what the native ones get
    rows, doc = [], {"frames": n, "clip": clip.name, "rounds": args.rounds,
                     "engine_options": engine, "solutions": {}}  # fmt: skip
    for name in names:
        seconds: dict[str, list[float]] = {c: [] for c in CONTENDERS}
        backends = set()
        for _ in range(args.warmup):  # what a process does once (imports, caches) untimed
            solution_pass(mp, name, frames)
            native_pass(name, frames, engine)
        for _, contender in alternating(CONTENDERS, args.rounds):
            if contender == "dropin":
                seconds[contender].append(solution_pass(mp, name, frames))
            elif contender == "native":
                s, backend = native_pass(name, frames, engine)
                seconds[contender].append(s)
                backends.add(backend)
            else:
                seconds[contender].append(mediapipe_pass(python, name, clip, len(frames)))
        best = {c: n / min(s) for c, s in seconds.items()}
        median = {c: n / float(np.median(s)) for c, s in seconds.items()}
        module, cls, solution_options, native = SOLUTIONS[name]
        doc["solutions"][name] = {"class": f"{module}.{cls}", "options": solution_options,
                                  "native": native, "backend": sorted(backends),
                                  "seconds": seconds, "fps_best": best, "fps_median": median}  # fmt: skip
        rows.append([f"{name} ({', '.join(sorted(backends))})",
                     *(f"{best[c]:.1f} / {median[c]:.1f}" for c in CONTENDERS),
                     f"{best['dropin'] / best['mediapipe']:.2f}x",
                     f"{best['dropin'] / best['native']:.3f}"])  # fmt: skip
    text = "\n".join([
        f"{n} frames of {clip.name} per pass, {args.rounds} round(s), contenders interleaved; "
        f"fps best / median pass; MediaPipe 0.10.14 on the CPU (XNNPACK), the drop-in and "
        f"native solutions on their default backend (adapter {ctx.name}), "
        f"{engine.get('num_threads', 'default')} threads", "",
        *table(["solution (backend)", "drop-in fps", "native fps", "MediaPipe fps",
                "drop-in / MediaPipe", "drop-in / native"], rows, "lrrrrr"),
    ])  # fmt: skip
    bench.report(text, doc, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
