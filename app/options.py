"""ar-demo's command line: every option, its choices read from the registries.

- planners: engine/memory/registry.py; storage kinds and sync modes: the engine's;
  precisions: engine/precision.py; backends and solutions: engine.vision's tables
  (BACKENDS, SOLUTIONS); effects and styles: app/effects/__init__.py
- usage: `args = build_parser().parse_args(argv)` (app/cli.py runs them)
"""

from __future__ import annotations

import argparse
import textwrap

from app.effects import EFFECTS, SOLUTION_EFFECTS
from app.hud import DOCKS
from app.output import DEFAULT_OUTPUT
from engine.gpu import KERNEL_MODES, STORAGE_OPTIONS, SYNC_MODES
from engine.memory import PLANNERS
from engine.precision import PRECISIONS
from engine.vision import BACKEND_CHOICES, BACKENDS

# app/headless.py EXIT_*, app/signals.py (128 + signal), docs/app.md "Exit codes"
EXIT_CODES_HELP = """
exit codes:
  0    every frame rendered and written
  1    some frames' GPU work failed (the input frame is written in their place)
  2    a problem found before any frame: options, display, output path or codec, model,
       input, camera, adapter (one line on stderr)
  3    completed, but damaged frames of the input could not be decoded and were skipped
       (listed in the summary and in --stats)
  4    the GPU device was lost: the output is finished up to the last frame
  130  interrupted by SIGINT (Ctrl-C), 143 by SIGTERM: the output holds every frame
       written so far and is playable; --stats is written"""
PLANNER_CHOICES = ("best", *PLANNERS)  # best: the smallest plan of each storage kind
# How an effect's kernels start (engine/gpu/staged.py KERNEL_MODES): "staged" draws its
# first frames with the compact kernel set (it compiles several times faster) and swaps in
# the optimized set once that is built in the background (the app's own pipeline.switch,
# a whole effect at a time); or one set from start to end.


def default_kernels(headless: bool) -> str:
    """The window starts staged (the first picture sooner); a headless run renders every
    frame of its file with the same kernels, the optimized ones."""
    return "optimized" if headless else "staged"


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="ar-demo",
        description="Live AR effects from TFLite models running on a WebGPU inference engine. "
        "Frames go to the GPU once; pre-processing, inference, post-processing and the "
        "overlay all run there, with no tensor read back.",
        epilog=textwrap.fill(
            "Keys in the window: q/Esc quit, s toggle sync sleep/spin, h HUD full/mini/off, "
            "d dock the HUD right/left/free, e next effect style, p next planner, f next "
            "precision (rebuilt in the background while the current effect draws). A video "
            "file plays in real time (late frames are dropped). Examples: `ar-demo --model "
            "models/selfie_segmentation.tflite` (camera 0, window); `ar-demo --model "
            "models/selfie_segmentation.tflite --input assets/sample.mp4 --headless --output "
            "out/demo.mp4`.",
            88,
        )
        + "\n"
        + EXIT_CODES_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--model", action="append", metavar="PATH",
                   help="a .tflite model; repeat for two-stage effects (face mesh = face "
                        "detection + face_landmark); or use --solution")  # fmt: skip
    p.add_argument("--solution", choices=tuple(SOLUTION_EFFECTS), metavar="NAME",
                   help="a MediaPipe solution with the manifest's models ("
                        + ", ".join(f"{n}: {' + '.join(e.models)}"
                                    for n, e in SOLUTION_EFFECTS.items())
                        + "); instead of --model")  # fmt: skip
    p.add_argument("--refine-landmarks", action="store_true",
                   help="face-mesh: face_landmark_with_attention instead of face_landmark "
                        "(478 landmarks: lips, eyes and irises refined; the irises style; "
                        "runs on webgpu: its custom ops have no XNNPACK kernel)")  # fmt: skip
    p.add_argument("--input", default="0", metavar="CAMERA_INDEX|VIDEO|IMAGE",
                   help="camera index, video file or still image (repeated); default: camera 0")  # fmt: skip
    p.add_argument(
        "--headless",
        action="store_true",
        help="no window: render offscreen and encode every frame to --output",
    )
    p.add_argument(
        "--output",
        metavar="OUT.mp4",
        help=f"headless output video (mp4v); default {DEFAULT_OUTPUT}",
    )
    p.add_argument("--effect", default="auto", choices=("auto", *EFFECTS),
                   help="what to draw; auto picks from the model outputs (mask -> "
                        "segmentation, SSD boxes+scores -> face detection, detection + 468 "
                        "landmarks -> face mesh)")  # fmt: skip
    styles = "; ".join(f"{e.name}: {', '.join(e.styles)}" for e in EFFECTS.values())
    p.add_argument("--style", metavar="NAME",
                   help=f"initial effect style ({styles}); the e key cycles")  # fmt: skip
    p.add_argument("--object", metavar="FILE.obj",
                   help="face-mesh, glasses style: the 3D object put on each face (a "
                        "Wavefront .obj, or a MediaPipe Mesh3d .pbtxt, in the canonical face's "
                        "frame: centimetres, y up, z out of the face); default MediaPipe's "
                        "example glasses")  # fmt: skip
    p.add_argument("--texture", metavar="FILE",
                   help="face-mesh, paint style: the image painted on each face through the "
                        "canonical face's UVs (8-bit PNG, JPEG, ...; alpha blends), and the "
                        "--object's texture; default a pattern of the app's")  # fmt: skip
    p.add_argument("--max-faces", type=int, default=1, metavar="N",
                   help="face-mesh: track up to N faces (MediaPipe's max_num_faces, default "
                        "1); above 1 the ROIs are decided on the CPU and the glasses and paint "
                        "styles draw every face, the other styles the first")  # fmt: skip
    p.add_argument("--sync", default="sleep", choices=SYNC_MODES,
                   help="how the CPU waits for the GPU each frame: sleep (block) or spin "
                        "(poll without sleeping); s toggles it live")  # fmt: skip
    p.add_argument(
        "--planner",
        default="best",
        choices=PLANNER_CHOICES,
        help="memory planner for intermediate tensors (best: the smallest plan; "
        + "; ".join(f"{p.name}: {p.description}, {'/'.join(p.kinds)}" for p in PLANNERS.values())
        + "); the HUD switches it live",
    )
    p.add_argument(
        "--storage",
        default="auto",
        choices=STORAGE_OPTIONS,
        help="where intermediate tensors live: buffer, texture, auto (a fixed rule per adapter "
        "and precision) or tune (measured once per adapter, cached)",
    )
    p.add_argument(
        "--precision",
        default="fp32",
        choices=tuple(PRECISIONS),
        help="storage precision of tensors on the GPU (fp16 needs shader-f16)",
    )
    p.add_argument(
        "--backend",
        default="auto",
        choices=BACKEND_CHOICES,
        help="where the models run: "
        + "; ".join(f"{b.name}: {b.description}" for b in BACKENDS.values())
        + "; auto: xnnpack when the adapter is a CPU rasterizer such as lavapipe, else "
        "webgpu (the HUD and --stats say which ran)",
    )
    p.add_argument(
        "--kernels",
        choices=KERNEL_MODES,
        help="staged (the window's default): the first frames run the compact kernel set, "
        "which compiles 3-8x faster and runs 1.6-4.4x slower, while the optimized set is built "
        "in the background and swapped in; optimized (the headless default: the same "
        "kernels for every frame of the file); compact: the compact set throughout",
    )
    p.add_argument("--frames", type=int, metavar="N",
                   help="stop after N frames (a still image repeats; default: the whole "
                        "video, or 30 frames of a still in headless mode)")  # fmt: skip
    p.add_argument("--stats", metavar="STATS.json",
                   help="write the run summary (FPS, latency percentiles per stage, memory "
                        "plan, transfers, frames with a face) as JSON")  # fmt: skip
    p.add_argument("--results", metavar="OUT.jsonl",
                   help="write every frame's results as JSON lines: boxes and keypoints, face "
                        "mesh landmarks, mask statistics (one readback per frame)")  # fmt: skip
    p.add_argument("--hud", action=argparse.BooleanOptionalAction, default=None,
                   help="draw the HUD (default: on in the window, off in headless mode, where "
                        "--hud burns it into the video)")  # fmt: skip
    p.add_argument("--hud-dock", default="right", choices=DOCKS,
                   help="where the window's HUD sits: right or left side, or free (drag it); "
                        "the d key cycles")  # fmt: skip
    p.add_argument("--adapter", metavar="NAME",
                   help="WebGPU adapter whose name/backend contains NAME (e.g. llvmpipe, "
                        "Vulkan); default: the best one (also ENGINE_ADAPTER)")  # fmt: skip
    p.add_argument("--no-progress", action="store_true",
                   help="headless: no start-up progress line and no progress bar")  # fmt: skip
    p.add_argument("--verbose", action="store_true",
                   help="show the libraries' own logs (FFmpeg's decoder messages on a damaged "
                        "video, OpenCV, wgpu)")  # fmt: skip
    return p
