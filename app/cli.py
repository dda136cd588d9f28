"""ar-demo: camera or video -> TFLite model on the WebGPU engine -> effect -> window or file.

    ar-demo --model models/selfie_segmentation.tflite                    # camera 0, window + HUD
    ar-demo --model models/face_detection_short_range.tflite --model models/face_landmark.tflite \\
            --input assets/sample.mp4 --headless --output out/mesh.mp4    # face mesh, to a file

Errors a person can fix (missing file, no camera, no adapter, models that fit no effect)
print one line and exit 2.
"""

from __future__ import annotations

import argparse
import sys

from app.errors import AppError

PLANNER_CHOICES = ("best", "naive", "greedy", "greedy_by_size", "mincostflow", "arena")
DEFAULT_OUTPUT = "out/ar-demo.mp4"


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="ar-demo",
        description="Live AR effects from TFLite models running on a WebGPU inference engine. "
        "Frames go to the GPU once; pre-processing, inference, post-processing and the "
        "overlay all run there, with no tensor read back.",
        epilog="Keys in the window: q/Esc quit, s toggle sync sleep/spin, h toggle the HUD, "
        "e next effect style. Examples: `ar-demo --model models/selfie_segmentation.tflite` "
        "(camera 0, window); `ar-demo --model models/selfie_segmentation.tflite --input "
        "assets/sample.mp4 --headless --output out/demo.mp4`.",
    )
    p.add_argument("--model", action="append", required=True, metavar="PATH",
                   help="a .tflite model; repeat for two-stage effects (face mesh = face "
                        "detection + face_landmark)")  # fmt: skip
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
    p.add_argument("--effect", default="auto",
                   choices=("auto", "segmentation", "face-detection", "face-mesh"),
                   help="what to draw; auto picks from the model outputs (mask -> "
                        "segmentation, SSD boxes+scores -> face detection, detection + 468 "
                        "landmarks -> face mesh)")  # fmt: skip
    p.add_argument("--style", metavar="NAME",
                   help="initial effect style (segmentation: blur, replace, tint, mask; "
                        "face-detection: box+keypoints, keypoints, box; face-mesh: points+roi, "
                        "points); the e key cycles")  # fmt: skip
    p.add_argument("--sync", default="sleep", choices=("sleep", "spin"),
                   help="how the CPU waits for the GPU each frame: sleep (block) or spin "
                        "(poll without sleeping); s toggles it live")  # fmt: skip
    p.add_argument(
        "--planner",
        default="best",
        choices=PLANNER_CHOICES,
        help="memory planner for intermediate tensors (best: the smallest plan)",
    )
    p.add_argument(
        "--precision",
        default="fp32",
        choices=("fp32", "fp16"),
        help="storage precision of tensors on the GPU (fp16 needs shader-f16)",
    )
    p.add_argument("--frames", type=int, metavar="N",
                   help="stop after N frames (a still image repeats; default: the whole "
                        "video, or 30 frames of a still in headless mode)")  # fmt: skip
    p.add_argument("--stats", metavar="STATS.json",
                   help="write the run summary (FPS, latency percentiles per stage, memory "
                        "plan, transfers) as JSON")  # fmt: skip
    p.add_argument("--hud", action=argparse.BooleanOptionalAction, default=None,
                   help="draw the HUD (default: on in the window, off in headless mode, where "
                        "--hud burns it into the video)")  # fmt: skip
    p.add_argument("--adapter", metavar="NAME",
                   help="WebGPU adapter whose name/backend contains NAME (e.g. llvmpipe, "
                        "Vulkan); default: the best one (also ENGINE_ADAPTER)")  # fmt: skip
    p.add_argument("--no-progress", action="store_true", help="headless: no progress bar")
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return run(args)
    except AppError as exc:
        return _fail(str(exc))
    except Exception as exc:
        from engine.errors import EngineError

        if isinstance(exc, EngineError):
            return _fail(str(exc))
        raise


def _fail(message: str) -> int:
    print(f"ar-demo: error: {message.splitlines()[0] if message else 'failed'}", file=sys.stderr)
    return 2


def run(args) -> int:
    import cv2

    from app.models import choose_effect, load_model
    from app.sources import open_source

    cv2.utils.logging.setLogLevel(cv2.utils.logging.LOG_LEVEL_SILENT)  # one-line errors
    if args.frames is not None and args.frames < 1:
        raise AppError("--frames must be at least 1")
    if len(args.model) > 2:
        raise AppError("at most two --model (face mesh: face detection + face_landmark)")
    specs = [load_model(m) for m in args.model]
    effect = choose_effect(specs, args.effect)
    from app.effects import effect_class

    styles = effect_class(effect).styles
    if args.style and args.style not in styles:
        raise AppError(f"--style {args.style}: {effect} has styles {', '.join(styles) or 'none'}")
    limit = args.frames
    if args.headless and limit is None and not args.input.isdigit():
        from app.sources import IMAGE_SUFFIXES

        if any(args.input.lower().endswith(s) for s in IMAGE_SUFFIXES):
            limit = 30
    if args.headless and limit is None and args.input.isdigit():
        raise AppError("--headless from a camera needs --frames N (or use --input FILE)")
    source = open_source(args.input, limit)
    ctx = _context(args.adapter)
    hud_on = (not args.headless) if args.hud is None else args.hud
    info = {"adapter": ctx.name, "effect": effect, "sync": args.sync,
            "precision": args.precision, "input": args.input}  # fmt: skip
    if args.headless:
        return _headless(args, ctx, specs, effect, source, hud_on, info)
    from app.window import run_window

    return run_window(args, ctx, specs, effect, source, hud_on, info)


def _context(adapter: str | None):
    from engine.gpu.device import shared_context

    return shared_context(adapter)  # DeviceError (exit 2) says how to install a driver


def make_pipeline(args, ctx, specs, effect: str, size, target_format: str):
    from app.pipeline import FramePipeline

    pipeline = FramePipeline(
        ctx, specs, effect, size, target_format, sync=args.sync, precision=args.precision,
        planner=None if args.planner == "best" else args.planner,
    )  # fmt: skip
    if args.style:
        while pipeline.effect.style_name != args.style:
            pipeline.effect.cycle_style()
    return pipeline


def _headless(args, ctx, specs, effect, source, hud_on, info) -> int:
    from app.headless import run_headless
    from app.hud import Hud

    fmt = "bgra8unorm"
    pipeline = make_pipeline(args, ctx, specs, effect, source.size, fmt)
    hud = Hud(ctx.device, fmt, source.size, adapter=ctx.name) if hud_on else None
    info["style"] = pipeline.effect.style_name
    return run_headless(pipeline, source, args.output or DEFAULT_OUTPUT, hud=hud,
                        stats_path=args.stats, info=info, progress=not args.no_progress)  # fmt: skip


if __name__ == "__main__":
    sys.exit(main())
