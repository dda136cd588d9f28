"""The output video: which codec each extension gets, checked before anything compiles.

- input: `--output` path, the frame size and rate
- output: an OpenCV VideoWriter (`open_writer`); `check_output` (start-up, before the
  models compile): the extension is one we can encode, the folder is writable, and a
  one-frame probe file with that codec opens, is written and is removed again
- usage: `check_output("out/demo.mp4")` (AppError, one line); `w = open_writer(p, 30, (640, 480))`

Codecs by extension, measured with opencv-python-headless 5.0 (FFmpeg backend): mp4v
encodes .mp4 .m4v .mov .mkv .avi silently; .webm works with VP80 but OpenCV prints a
"tag is not supported" line for it whatever its log level (left out); avc1 (H.264) is not
in the wheel.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import numpy as np

from app.errors import AppError

DEFAULT_OUTPUT = "out/ar-demo.mp4"
CODECS = {".mp4": "mp4v", ".m4v": "mp4v", ".mov": "mp4v", ".mkv": "mp4v", ".avi": "mp4v"}


def codec_for(path: str | Path) -> str:
    """The fourcc for `path`'s extension; AppError naming the ones we can write."""
    suffix = Path(path).suffix.lower()
    if suffix not in CODECS:
        known = " ".join(CODECS)
        what = f"extension '{suffix}'" if suffix else "no extension"
        raise AppError(f"--output {path}: {what} is not a video format ar-demo writes "
                       f"(use one of {known})")  # fmt: skip
    return CODECS[suffix]


def check_output(path: str | Path) -> None:
    """Can a video be written at `path`? Extension, folder, codec; one-line AppError."""
    import cv2

    path = Path(path)
    codec = codec_for(path)
    if path.is_dir():
        raise AppError(f"--output {path}: is a directory; give a file name such as {path}/out.mp4")
    folder = path.parent
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise AppError(
            f"--output {path}: cannot create the folder {folder} ({exc.strerror})"
        ) from None
    if not os.access(folder, os.W_OK) or (path.exists() and not os.access(path, os.W_OK)):
        raise AppError(f"--output {path}: {folder} is not writable")
    fd, probe = tempfile.mkstemp(prefix=".ar-demo-probe-", suffix=path.suffix, dir=folder)
    os.close(fd)
    try:
        writer = cv2.VideoWriter(probe, cv2.VideoWriter_fourcc(*codec), 30.0, (64, 48))
        ok = writer.isOpened()
        if ok:
            writer.write(np.zeros((48, 64, 3), np.uint8))
        writer.release()
    finally:
        Path(probe).unlink(missing_ok=True)
    if not ok:
        raise AppError(f"--output {path}: OpenCV cannot encode {codec} into {path.suffix} "
                       f"here (try .mp4)")  # fmt: skip


# OpenCV's FFmpeg writers refuse a frame with a side of 1 (isOpened() is False for 1xN and
# Nx1 with mp4v; 2x2 and odd sizes such as 3x5 open and play back)
MIN_SIDE = 2


def check_frame_size(path: str | Path, size: tuple[int, int], source: str) -> None:
    """AppError naming the cause when the encoder cannot take frames of `size` (w, h)."""
    w, h = size
    if min(w, h) < MIN_SIDE:
        raise AppError(f"--output {path}: the {codec_for(path)} encoder takes frames of at "
                       f"least {MIN_SIDE}x{MIN_SIDE} pixels; {source} is {w}x{h}")  # fmt: skip


def open_writer(path: str | Path, fps: float, size: tuple[int, int]):
    """A VideoWriter for `path` (codec by extension); AppError when it does not open."""
    import cv2

    path = Path(path)
    check_frame_size(path, size, "the input")
    codec = codec_for(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*codec), fps, size)
    if not writer.isOpened():
        raise AppError(f"{path}: cannot open a video writer ({codec}) there")
    return writer
