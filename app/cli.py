"""ar-demo: camera or video -> TFLite model on the WebGPU engine -> effect -> window or file.

    ar-demo --model models/selfie_segmentation.tflite                    # camera 0, window + HUD
    ar-demo --model models/face_detection_short_range.tflite --model models/face_landmark.tflite \\
            --input assets/sample.mp4 --headless --output out/mesh.mp4    # face mesh, to a file

Start-up, in order (each failure one line, exit 2, before any model compiles): the options,
the models' files, the display (window) or the output video (headless: extension, folder,
codec), the input (camera or file), the adapter; then the compile and the frames.
SIGINT / SIGTERM at any point end with one line on stderr and exit 130 / 143 (app/signals.py);
in headless mode the video holds every frame written so far and the stats are written.
Exit codes: app/headless.py EXIT_*, listed in --help and docs/app.md.
"""

from __future__ import annotations

import logging
import sys

from app.errors import AppError
from app.heap import map_large_blocks, share_heaps
from app.signals import Interrupted, StopSignals, print_line


def main(argv: list[str] | None = None) -> int:
    """The CLI; `argv` given (a caller in-process, e.g. a test): the signal handlers are put
    back on return. Without it (the process is ar-demo) signals are ignored from then on
    until the process exits: a late Ctrl-C cannot kill it between the stats and exit."""
    stop = StopSignals.install()  # first: the option parser imports the engine (~0.1 s)
    if argv is None:  # the process is ar-demo: its threads share the heaps, frame-sized
        share_heaps()  # blocks are mapped on their own (app/heap.py)
        map_large_blocks()
    try:
        return _main(argv, stop)
    except Interrupted as exc:  # parsing the options, or a signal that got out late
        stop.shutdown()
        print_line(f"ar-demo: interrupted by {exc.name} while starting; no frame was written")
        return exc.exit_code
    finally:
        if argv is not None:
            stop.restore()
        else:
            stop.ignore_until_exit()


def _main(argv: list[str] | None, stop: StopSignals) -> int:
    from app.options import build_parser

    args = build_parser().parse_args(argv)
    _quiet_libraries(args.verbose)
    try:
        return run(args, stop)
    except Interrupted as exc:  # before the frame loop: nothing was written
        stop.shutdown()
        return _interrupted_at_start(args, stop, exc)
    except AppError as exc:
        return _fail(str(exc))
    except Exception as exc:
        from engine.errors import EngineError

        if isinstance(exc, EngineError):
            return _fail(str(exc))
        raise


def _fail(message: str) -> int:
    print_line(f"ar-demo: error: {message.splitlines()[0] if message else 'failed'}")
    return 2


def _quiet_libraries(verbose: bool) -> None:
    """One line per problem: OpenCV's and FFmpeg's logs off, wgpu's device-lost banner off
    (the app says it in its own line) unless --verbose."""
    import cv2

    cv2.utils.logging.setLogLevel(
        cv2.utils.logging.LOG_LEVEL_INFO if verbose else cv2.utils.logging.LOG_LEVEL_SILENT
    )
    if verbose:
        logging.basicConfig(level=logging.INFO, format="%(name)s: %(message)s")
        return  # FFmpeg's log: app/sources.py VideoSource(verbose=True)
    import wgpu  # first: it installs its own logger class for "wgpu"

    wgpu_log = logging.getLogger(wgpu.logger.name)
    if not any(isinstance(f, _LostBanner) for f in wgpu_log.filters):
        wgpu_log.addFilter(_LostBanner())


class _LostBanner(logging.Filter):
    """Drops wgpu-py's "DEVICE LOST!" / "The WGPU device was lost" log records."""

    def filter(self, record: logging.LogRecord) -> bool:
        text = record.getMessage()
        return not (text.startswith("DEVICE LOST") or "device was lost" in text)


def run(args, stop: StopSignals) -> int:
    from app.effects import SOLUTION_EFFECTS, effect_info
    from app.models import choose_effect, load_model, solution_models
    from app.options import default_kernels
    from app.output import DEFAULT_OUTPUT, check_frame_size
    from app.preflight import check_effect_files, check_options, check_outputs
    from app.sources import IMAGE_SUFFIXES, open_source

    stop.stage = "checking the options"
    check_options(args)
    args.kernels = args.kernels or default_kernels(args.headless)
    stop.stage = "reading the models"
    if args.solution:
        args.model = solution_models(args.solution, args.refine_landmarks)
        args.effect = SOLUTION_EFFECTS[args.solution].name if args.effect == "auto" else args.effect
    specs = [load_model(m) for m in args.model]
    effect = choose_effect(specs, args.effect)
    styles = effect_info(effect).styles
    if args.style and args.style not in styles:
        raise AppError(f"--style {args.style}: {effect} has styles {', '.join(styles) or 'none'}")
    if args.style == "irises" and not any(s.refined for s in specs):
        raise AppError("--style irises draws the refined landmarks: add --refine-landmarks "
                       "(face_landmark_with_attention)")  # fmt: skip
    check_effect_files(args, effect)
    stop.stage = "checking the display and the output"
    check_outputs(args, DEFAULT_OUTPUT)
    limit = args.frames
    if args.headless and limit is None and not args.input.isdigit():
        if any(args.input.lower().endswith(s) for s in IMAGE_SUFFIXES):
            limit = 30
    stop.stage = "opening the input"
    source = open_source(args.input, limit, verbose=args.verbose)
    if args.headless:  # before the models compile: the writer cannot take every size
        check_frame_size(args.output or DEFAULT_OUTPUT, source.size, args.input)
    stop.stage = "creating the WebGPU device"
    ctx = _context(args.adapter)
    _check_storage(args, ctx)
    hud_on = (not args.headless) if args.hud is None else args.hud
    info = {"adapter": ctx.name, "effect": effect, "sync": args.sync, "precision": args.precision,
            "storage": args.storage, "kernels": args.kernels, "input": args.input}  # fmt: skip
    stop.check()
    if args.headless:
        return _headless(args, ctx, specs, effect, source, hud_on, info, stop)
    from app.window import run_window

    stop.stage = "compiling the models"
    stop.window()  # the window's loop ends on a signal; window.py prints its summary
    code = run_window(args, ctx, specs, effect, source, hud_on, info)
    if stop.requested:
        print_line(f"ar-demo: interrupted by {stop.name}")
        return stop.exit_code
    return code


def _context(adapter: str | None):
    from engine.gpu import shared_context

    return shared_context(adapter)  # DeviceError (exit 2) says how to install a driver


def _check_storage(args, ctx) -> None:
    """The planner must plan the storage kind the engines will use (one line, exit 2)."""
    from engine.gpu import check_planners, resolve_storage

    if args.planner == "best":
        return
    kind = resolve_storage(args.storage, ctx, args.precision)
    try:
        check_planners(args.planner, None, kind)
    except ValueError as exc:
        raise AppError(f"--planner {args.planner}: {exc} (storage: {kind})") from None


def _headless(args, ctx, specs, effect, source, hud_on, info, stop: StopSignals) -> int:
    from app.headless import EXIT_DEVICE_LOST, EXIT_SKIPPED, run_headless
    from app.hud import Hud
    from app.output import DEFAULT_OUTPUT
    from app.pipeline import make_pipeline

    fmt = "bgra8unorm"
    stop.stage = "compiling the models"
    pipeline = make_pipeline(args, ctx, specs, effect, source.size, fmt, echo=not args.no_progress)
    hud = Hud(ctx.device, fmt, source.size, adapter=ctx.name) if hud_on else None
    info["style"] = pipeline.effect.style_name
    info["backend"] = pipeline.effect.backend_name
    stop.check()
    stop.stage = "running"
    output = args.output or DEFAULT_OUTPUT
    try:
        code = run_headless(pipeline, source, output, hud=hud, stats_path=args.stats,
                            info=info, progress=not args.no_progress, stop=stop)  # fmt: skip
    finally:
        pipeline.cancel_switch()  # also when something failed before the first frame
    n = source.frames_read
    frames = f"{n} frame{'' if n == 1 else 's'} in {output}"
    if stop.requested:
        print_line(f"ar-demo: interrupted by {stop.name}: {frames} (playable)"
                   + (f", stats in {args.stats}" if args.stats else ""))  # fmt: skip
    elif code == EXIT_DEVICE_LOST:
        print_line(f"ar-demo: error: the GPU device was lost ({ctx.lost or 'device lost'}); "
                   f"{frames} (finished, playable)")  # fmt: skip
    elif code == EXIT_SKIPPED:
        print_line(f"ar-demo: warning: {source.frames_skipped} damaged frames of {args.input} "
                   f"could not be decoded and were skipped (listed in the summary)")  # fmt: skip
    return code


def _interrupted_at_start(args, stop: StopSignals, exc: Interrupted) -> int:
    """A signal before the first frame: one line, the stats say where it stopped."""
    from app.headless import write_stats

    where = getattr(stop, "stage", "starting")
    print_line(f"ar-demo: interrupted by {exc.name} while {where}; no frame was written")
    try:
        write_stats(args.stats, {
            "interrupted": exc.name, "stage": where, "exit_code": exc.exit_code,
            "frames_read": 0, "frames_written": 0, "frames_failed": 0, "frames_in_output": 0,
            "output": None, "input": args.input, "models": args.model,
        })  # fmt: skip
    except OSError:
        pass
    return exc.exit_code


if __name__ == "__main__":
    sys.exit(main())
