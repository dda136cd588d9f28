"""ar-demo: camera or video -> TFLite model on the WebGPU engine -> effect -> window or file.

    ar-demo --model models/selfie_segmentation.tflite                    # camera 0, window + HUD
    ar-demo --model models/face_detection_short_range.tflite --model models/face_landmark.tflite \\
            --input assets/sample.mp4 --headless --output out/mesh.mp4    # face mesh, to a file

Errors a person can fix (missing file, no camera, no adapter, models that fit no effect)
print one line and exit 2.
"""

from __future__ import annotations

import sys

from app.errors import AppError
from app.options import DEFAULT_OUTPUT, build_parser


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
    from app.effects import effect_info

    styles = effect_info(effect).styles
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
    _check_storage(args, ctx)
    hud_on = (not args.headless) if args.hud is None else args.hud
    info = {"adapter": ctx.name, "effect": effect, "sync": args.sync,
            "precision": args.precision, "storage": args.storage, "input": args.input}  # fmt: skip
    if args.headless:
        return _headless(args, ctx, specs, effect, source, hud_on, info)
    from app.window import run_window

    return run_window(args, ctx, specs, effect, source, hud_on, info)


def _context(adapter: str | None):
    from engine.gpu.device import shared_context

    return shared_context(adapter)  # DeviceError (exit 2) says how to install a driver


def _check_storage(args, ctx) -> None:
    """The planner must plan the storage kind the engines will use (one line, exit 2)."""
    from engine.gpu.compile import check_planners
    from engine.gpu.storage_choice import resolve_storage

    if args.planner == "best":
        return
    kind = resolve_storage(args.storage, ctx, args.precision)
    try:
        check_planners(args.planner, None, kind)
    except ValueError as exc:
        raise AppError(f"--planner {args.planner}: {exc} (storage: {kind})") from None


def _headless(args, ctx, specs, effect, source, hud_on, info) -> int:
    from app.headless import run_headless
    from app.hud import Hud
    from app.pipeline import make_pipeline

    fmt = "bgra8unorm"
    pipeline = make_pipeline(args, ctx, specs, effect, source.size, fmt, echo=not args.no_progress)
    hud = Hud(ctx.device, fmt, source.size, adapter=ctx.name) if hud_on else None
    info["style"] = pipeline.effect.style_name
    return run_headless(pipeline, source, args.output or DEFAULT_OUTPUT, hud=hud,
                        stats_path=args.stats, info=info, progress=not args.no_progress)  # fmt: skip


if __name__ == "__main__":
    sys.exit(main())
