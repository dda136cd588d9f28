"""Headless video mode: the live pipeline into an offscreen texture, encoded frame for frame.

- input: a FrameSource (video file, still image, camera), a FramePipeline, an output path
- output: a video (OpenCV VideoWriter, app/output.py) with one output frame per frame read,
  a progress bar with ETA (tqdm, on stderr), the summary table, optionally the --stats JSON
- options: `hud` burns the imgui HUD into every frame (same renderer as the window);
  `stop` (app/signals.StopSignals) ends the loop on SIGINT / SIGTERM
- usage: `code = run_headless(pipeline, source, "out/demo.mp4", hud=None)`

Per frame: the live path (one upload, one submit, no tensor readback) plus the one
exception: the rendered frame is copied out in the same submit and read back to encode it
(counted as `frame_readbacks`). Every frame read ends up in the file exactly once:
- rendered: counted in `frames_written`;
- its GPU work failed: the input frame is written instead, listed in `failed_frames`
  (`frames_failed`), so `frames_read == frames_written + frames_failed` always;
- the device was lost: that frame as failed, then the loop ends (exit 4);
- a signal: the frame in flight finishes, the loop ends; the writer is released (the mp4
  gets its index: playable), the summary and the stats are written, exit 130 / 143.
Decoding runs a few frames ahead and encoding behind the loop, on worker threads
(engine/vision/read_ahead.py, app/frame_workers.py: same file, byte for byte); `frames_read` counts the frames the loop
took, so frames decoded ahead of a stop are not counted (nor written).
Frames of a damaged input that could not be decoded are not read: `skipped_frames` lists
them (ranges with the reason) and the exit code is 3 when nothing else went wrong.
"""

from __future__ import annotations

import json
import time
from functools import partial
from pathlib import Path

import cv2

from app.build import since_launch
from app.frame_workers import WriteBehind
from app.output import open_writer
from app.signals import Interrupted, StopSignals
from engine.vision.read_ahead import ReadAhead

WARMUP_FRAMES = 2  # left out of the percentiles: shader compilation, first allocations
# Exit codes (ar-demo --help, docs/app.md)
EXIT_OK, EXIT_FAILED_FRAMES, EXIT_USAGE, EXIT_SKIPPED, EXIT_DEVICE_LOST = 0, 1, 2, 3, 4

__all__ = ["open_writer", "run_headless", "format_report", "write_stats"]


class _Run:
    """What happened to the frames of one run (the counts the summary reports)."""

    def __init__(self):
        self.written = 0
        self.failed: list[dict] = []
        self.device_lost: str | None = None
        self.in_hand = None  # a frame read and not yet in the file


def run_headless(pipeline, source, output: str | Path, *, hud=None, stats_path=None,
                 info: dict | None = None, progress: bool = True,
                 stop: StopSignals | None = None, report: bool = True) -> int:  # fmt: skip
    """Run every frame of `source`; returns the exit code (module docstring, EXIT_*)."""
    import wgpu
    from tqdm import tqdm

    stop = stop or StopSignals()  # not installed: never requested
    w, h = source.size
    target = pipeline.device.create_texture(
        size=(w, h, 1), format=pipeline.target_format,
        usage=wgpu.TextureUsage.RENDER_ATTACHMENT | wgpu.TextureUsage.COPY_SRC,
        label="offscreen target",
    )  # fmt: skip
    view = target.create_view()
    writer = open_writer(output, source.fps, (w, h))
    run = _Run()
    tl = pipeline.timeline
    bar = tqdm(total=source.count, unit="frame", desc=Path(output).name, disable=not progress,
               dynamic_ncols=True, leave=True)  # fmt: skip
    # decode ahead and encode behind on worker threads (read_ahead.py, frame_workers.py)
    frames = ReadAhead(iter(source.read, None))
    behind = WriteBehind(lambda write: write())
    t0 = time.perf_counter()
    try:
        with stop.loop():
            _loop(pipeline, frames, behind, writer, view, target, hud, stop, run, bar)
    except Interrupted:  # a second signal while a frame was on the GPU
        if run.in_hand is not None:
            reason = f"interrupted by {stop.name} on the GPU"
            behind.put(partial(_write_input, writer, run, run.in_hand, reason, bar))
            run.in_hand = None
    finally:
        stop.shutdown()  # from here on a signal cannot cut the file or the stats
        frames.close()
        behind.close()  # every frame handed over is in the file
        writer.release()
        bar.close()
        source.close()
        pipeline.cancel_switch()  # --kernels staged on a clip shorter than its build
    tl.warmup = min(WARMUP_FRAMES, max(0, len(tl) - 1))
    summary = tl.summary({
        "title": f"ar-demo headless: {source.name} -> {output}",
        **(info or {}),
        "output": str(output),
        "frames_read": frames.delivered,  # not the frames decoded ahead after a stop
        "frames_written": run.written,
        "frames_failed": len(run.failed),
        "frames_in_output": run.written + len(run.failed),
        "frames_skipped": source.frames_skipped,
        "frames_declared": getattr(source, "declared", source.count),
        "run_s": time.perf_counter() - t0,
        "interrupted": stop.name,
        "device_lost": run.device_lost,
        "failed_frames": run.failed,
        "skipped_frames": [s.as_dict() for s in source.skipped],
        "concealed_frames": sum(s.count for s in source.concealed),
        "models": pipeline.models_info(),
        "transfers": pipeline.transfers(),
        "hud": hud is not None,
    })  # fmt: skip
    code = exit_code(summary, stop)
    summary["exit_code"] = code
    if report:
        print(format_report(summary))
    write_stats(stats_path, summary)
    return code


def _loop(pipeline, frames, behind, writer, view, target, hud, stop, run: _Run, bar) -> None:
    """Read, render, hand to the encoder until the end, a stop request or a lost device."""
    from engine.gpu import is_device_lost

    while not stop.requested:
        with stop.hold():
            run.in_hand = frames.read()
        frame = run.in_hand
        if frame is None:
            return
        try:
            rec = pipeline.process(frame, view, readback_texture=target, hud=hud)
        except Exception as exc:  # a device error on one frame: keep the file complete
            lost = is_device_lost(exc, pipeline.ctx)
            reason = _first_line(exc)
            with stop.hold():
                behind.put(partial(_write_input, writer, run, frame, reason, bar))
                run.in_hand = None
            if lost:
                run.device_lost = reason
                return
            continue
        with stop.hold():
            behind.put(partial(_write_rendered, writer, run, rec, pipeline.timeline, bar))
            run.in_hand = None


def _write_rendered(writer, run: _Run, rec, tl, bar) -> None:
    """On the encoder's thread: the rendered frame into the file, then its record."""
    t = time.perf_counter()
    writer.write(cv2.cvtColor(rec.image, cv2.COLOR_BGRA2BGR))
    run.written += 1
    rec.cpu_ms["encode"] = (time.perf_counter() - t) * 1e3
    rec.image = None
    rec.t_done = time.perf_counter()  # capture -> frame in the output file
    tl.add(rec)
    if len(tl) == 1:
        tl.startup["first_frame"] = since_launch()
    bar.update(1)


def _write_input(writer, run: _Run, frame, reason: str, bar) -> None:
    """On the encoder's thread: the input frame in place of one that could not be rendered
    (counted as failed)."""
    writer.write(frame.bgr)
    run.failed.append({"index": frame.index, "reason": reason})
    bar.update(1)


def _first_line(exc: BaseException) -> str:
    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
    # wgpu's validation errors: "Validation Error", "Caused by:", "In wgpuX", "<why>"
    detail = lines[-1] if len(lines) > 1 else (lines[0] if lines else "")
    return f"{type(exc).__name__}: {detail}" if detail else type(exc).__name__


def exit_code(summary: dict, stop: StopSignals) -> int:
    """The process's exit status for a finished run (docs/app.md "Exit codes")."""
    if stop.requested:
        return stop.exit_code
    if summary.get("device_lost"):
        return EXIT_DEVICE_LOST
    if summary.get("frames_failed"):
        return EXIT_FAILED_FRAMES
    if summary.get("frames_skipped"):
        return EXIT_SKIPPED
    return EXIT_OK


def write_stats(path, summary: dict) -> None:
    """The --stats JSON (written whole to a temporary name, then renamed: a reader never
    sees half a file, even if the process is killed while writing)."""
    if not path:
        return
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(summary, indent=2) + "\n")
    tmp.replace(path)


def format_report(summary: dict) -> str:
    from app.timeline import format_summary

    n_in = summary["frames_in_output"]
    head = [f"{n_in} of {summary['frames_read']} frames read written to {summary['output']}"
            f" ({summary['frames_written']} rendered, {summary['frames_failed']} failed)"]  # fmt: skip
    if summary.get("interrupted"):
        head.append(f"interrupted by {summary['interrupted']}: the file is complete up to here")
    if summary.get("device_lost"):
        head.append(f"the GPU device was lost: {summary['device_lost']}")
    if summary.get("frames_skipped"):
        ranges = ", ".join(f"{s['first']}" + (f"-{s['last']}" if s["count"] > 1 else "")
                           for s in summary["skipped_frames"])  # fmt: skip
        head.append(f"skipped {summary['frames_skipped']} damaged frames of the input "
                    f"(not decodable): {ranges}")  # fmt: skip
    if summary.get("concealed_frames"):
        head.append(f"{summary['concealed_frames']} frames decoded with errors concealed")
    keys = ("adapter", "backend", "effect", "style", "sync", "precision")
    head.append(", ".join(f"{k} {summary[k]}" for k in keys if k in summary))
    return "\n".join(head + [format_summary(summary)])
