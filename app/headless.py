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
Memory stays flat over any number of frames: the timeline is bounded (app/timeline.py) and
the free heap kept resident too (app/heap.py HeapTrim; the summary's `heap_trim`).
"""

from __future__ import annotations

import json
import time
from functools import partial
from pathlib import Path

from app.build import since_launch
from app.frame_workers import WriteBehind
from app.heap import HeapTrim
from app.output import open_writer
from app.pipeline import IN_FLIGHT
from app.signals import Interrupted, StopSignals
from engine.vision import ReadAhead

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
        self.in_hand: list = []  # frames read and not yet handed to the encoder, in order

    def hand_over(self, frame) -> bool:
        """`frame` leaves the hand (by identity: frames hold arrays); False if not in it."""
        for i, f in enumerate(self.in_hand):
            if f is frame:
                del self.in_hand[i]
                return True
        return False


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
        # COPY_DST: the frame is copied in under the overlay (FrameUploader.copy_into)
        usage=wgpu.TextureUsage.RENDER_ATTACHMENT | wgpu.TextureUsage.COPY_SRC
        | wgpu.TextureUsage.COPY_DST,
        label="offscreen target",
    )  # fmt: skip
    view = target.create_view()
    writer = open_writer(output, source.fps, (w, h))
    run = _Run()
    tl = pipeline.timeline
    bar = tqdm(total=source.count, unit="frame", desc=Path(output).name, disable=not progress,
               dynamic_ncols=True, leave=True)  # fmt: skip
    # decode ahead and encode behind on worker threads (read_ahead.py, frame_workers.py)
    frames = ReadAhead(iter(source.read, None), depth=2)
    heap = HeapTrim()  # trimmed on the encoder's thread after a frame: off the loop's path
    behind = WriteBehind(lambda write: (write(), heap.step()))
    t0 = time.perf_counter()
    try:
        with stop.loop():
            _loop(pipeline, frames, behind, writer, view, target, hud, stop, run, bar)
    except Interrupted:  # a second signal while frames were on the GPU
        reason = f"interrupted by {stop.name} on the GPU"
        for frame in run.in_hand:  # in frame order, after those already handed over
            behind.put(partial(_write_input, writer, run, frame, reason, bar))
        run.in_hand = []
        pipeline.drop_in_flight()
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
        "heap_trim": heap.summary(),
    })  # fmt: skip
    code = exit_code(summary, stop)
    summary["exit_code"] = code
    if report:
        print(format_report(summary))
    write_stats(stats_path, summary)
    return code


def _loop(pipeline, frames, behind, writer, view, target, hud, stop, run: _Run, bar) -> None:
    """Read, render, hand to the encoder until the end, a stop request or a lost device.
    Two frames are in flight where the pipeline allows it (app/pipeline.py submit/finish):
    frame i+1 is recorded and submitted before frame i is waited for and read back."""
    depth = IN_FLIGHT if pipeline.overlap_frames else 1
    flight = _Flight(pipeline, behind, writer, stop, run, bar)
    while not stop.requested:
        with stop.hold():
            frame = frames.read()
            if frame is not None:
                run.in_hand.append(frame)
        if frame is None:
            break
        if pipeline.switch_ready() and not flight.drain():
            return  # a switch swaps the effect: nothing may be in flight
        try:
            flight.pending.append(pipeline.submit(frame, view, readback_texture=target, hud=hud))
        except Exception as exc:  # a device error on one frame: keep the file complete
            if not flight.drain() or not flight.failed(frame, exc):
                return
            continue
        while len(flight.pending) >= depth:  # depth 2: the previous frame; 1: this one
            if not flight.finish_oldest():
                return
    flight.drain()


class _Flight:
    """The frames submitted and not yet finished, oldest first, and how each ends up in the
    file: rendered, or (its GPU work failed) the input in its place, in frame order."""

    def __init__(self, pipeline, behind, writer, stop, run: _Run, bar):
        self.pipeline, self.behind, self.writer = pipeline, behind, writer
        self.stop, self.run, self.bar = stop, run, bar
        self.pending: list = []  # app/pipeline.py InFlight

    def finish_oldest(self) -> bool:
        """Wait for the oldest frame and hand it to the encoder; False: the device is lost."""
        p = self.pending.pop(0)
        try:
            rec = self.pipeline.finish(p)
        except Exception as exc:
            return self.failed(p.frame, exc)
        with self.stop.hold():
            tl = self.pipeline.timeline
            self.behind.put(partial(_write_rendered, self.writer, self.run, rec, tl, self.bar,
                                    self.pipeline.images))  # fmt: skip
            self.run.hand_over(p.frame)
        return True

    def drain(self) -> bool:
        """Finish every frame in flight; False: the device is lost."""
        while self.pending:
            if not self.finish_oldest():
                return False
        return True

    def failed(self, frame, exc: Exception) -> bool:
        """`frame`'s input in its place (failed); False when the device is lost: then every
        other frame in hand goes in as failed too and the loop ends."""
        from engine.gpu import is_device_lost

        reason = _first_line(exc)
        lost = is_device_lost(exc, self.pipeline.ctx)
        with self.stop.hold():
            for f in [frame, *self.run.in_hand] if lost else [frame]:
                if self.run.hand_over(f):
                    self.behind.put(partial(_write_input, self.writer, self.run, f, reason,
                                            self.bar))  # fmt: skip
        if lost:
            self.run.device_lost = reason
            self.pending.clear()
            self.pipeline.drop_in_flight()
        return not lost


def _write_rendered(writer, run: _Run, rec, tl, bar, images) -> None:
    """On the encoder's thread: the rendered frame into the file, its array back to the
    pipeline's ImagePool, then its record."""
    t = time.perf_counter()
    writer.write(rec.image)
    run.written += 1
    rec.cpu_ms["encode"] = (time.perf_counter() - t) * 1e3
    images.give(rec.image)
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
