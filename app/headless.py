"""Headless video mode: the live pipeline into an offscreen texture, encoded frame for frame.

- input: a FrameSource (video file, still image, camera), a FramePipeline, an output path
- output: an mp4 (OpenCV VideoWriter, mp4v) with one output frame per input frame, a
  progress bar with ETA (tqdm, on stderr), the summary table, optionally the --stats JSON
- options: `hud` burns the imgui HUD into every frame (same renderer as the window)
- usage: `code = run_headless(pipeline, source, "out/demo.mp4", hud=None)`

Per frame: the live path (one upload, one submit, no tensor readback) plus the one
exception: the rendered frame is copied out in the same submit and read back to encode it
(counted as `frame_readbacks`). A frame whose GPU work fails is written as the input frame
and listed in the summary with the reason, so the output still has every frame. Ctrl-C
stops reading; the writer is released, so the file written so far is playable.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import cv2

from app.build import since_launch
from app.errors import AppError

WARMUP_FRAMES = 2  # left out of the percentiles: shader compilation, first allocations


def open_writer(path: str | Path, fps: float, size: tuple[int, int]):
    path = Path(path)
    if path.parent and not path.parent.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"mp4v"), fps, size)
    if not writer.isOpened():
        raise AppError(f"{path}: cannot open a video writer (mp4v) there")
    return writer


def run_headless(pipeline, source, output: str | Path, *, hud=None, stats_path=None,
                 info: dict | None = None, progress: bool = True) -> int:  # fmt: skip
    """Run every frame of `source`; returns the exit code: 0, 1 when frames failed, 130 when
    interrupted (Ctrl-C; the file is still complete and playable)."""
    import wgpu
    from tqdm import tqdm

    w, h = source.size
    target = pipeline.device.create_texture(
        size=(w, h, 1), format=pipeline.target_format,
        usage=wgpu.TextureUsage.RENDER_ATTACHMENT | wgpu.TextureUsage.COPY_SRC,
        label="offscreen target",
    )  # fmt: skip
    view = target.create_view()
    writer = open_writer(output, source.fps, (w, h))
    failed: list[dict] = []
    written, interrupted = 0, False
    tl = pipeline.timeline
    bar = tqdm(total=source.count, unit="frame", desc=Path(output).name, disable=not progress,
               dynamic_ncols=True, leave=True)  # fmt: skip
    t0 = time.perf_counter()
    try:
        while True:
            frame = source.read()
            if frame is None:
                break
            try:
                rec = pipeline.process(frame, view, hud=hud, readback_texture=target)
            except Exception as exc:  # a device error on one frame: keep the file complete
                failed.append({"index": frame.index, "reason": f"{type(exc).__name__}: {exc}"})
                writer.write(frame.bgr)
                written += 1
                bar.update(1)
                continue
            t = time.perf_counter()
            writer.write(cv2.cvtColor(rec.image, cv2.COLOR_BGRA2BGR))
            rec.cpu_ms["encode"] = (time.perf_counter() - t) * 1e3
            rec.image = None
            rec.t_done = time.perf_counter()  # capture -> frame in the output file
            tl.add(rec)
            if len(tl.records) == 1:
                tl.startup["first_frame"] = since_launch()
            written += 1
            bar.update(1)
    except KeyboardInterrupt:
        interrupted = True
    finally:
        writer.release()
        bar.close()
        source.close()
    tl.warmup = min(WARMUP_FRAMES, max(0, len(tl.records) - 1))
    expected = source.count
    if not interrupted and expected is not None and source.index < expected:
        failed.append({"index": source.index,
                       "reason": f"the decoder stopped after {source.index} of {expected} "
                                 f"frames the file declares"})  # fmt: skip
    summary = tl.summary({
        "title": f"ar-demo headless: {source.name} -> {output}",
        **(info or {}),
        "output": str(output),
        "frames_read": source.index,
        "frames_written": written,
        "run_s": time.perf_counter() - t0,
        "interrupted": interrupted,
        "failed_frames": failed,
        "models": pipeline.models_info(),
        "transfers": pipeline.transfers(),
        "hud": hud is not None,
    })  # fmt: skip
    print(format_report(summary))
    if stats_path:
        Path(stats_path).parent.mkdir(parents=True, exist_ok=True)
        Path(stats_path).write_text(json.dumps(summary, indent=2) + "\n")
    if interrupted:
        return 130  # the shell's code for Ctrl-C; the file is complete up to the last frame
    return 1 if failed else 0


def format_report(summary: dict) -> str:
    from app.stats import format_summary

    head = [
        f"{summary['frames_written']} of {summary['frames_read']} frames written to "
        f"{summary['output']}" + (" (interrupted: the file is complete up to here)"
                                  if summary["interrupted"] else ""),
    ]  # fmt: skip
    keys = ("adapter", "effect", "style", "sync", "precision")
    head.append(", ".join(f"{k} {summary[k]}" for k in keys if k in summary))
    return "\n".join(head + [format_summary(summary)])
