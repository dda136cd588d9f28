"""A video file's frames for engine-extract: RGB uint8 arrays with increasing timestamps.

- input: a path PyAV (FFmpeg) can open; `max_frames` stops early
- output: `Video(path)` with `frames` (the container's count, or None when
  it declares none) and `read(max_frames)` yielding (rgb (H, W, 3) uint8, timestamp_ms)
- timestamps: the frame's presentation time in ms (its index at the stream's rate when the
  container gives none), nudged up to keep increasing (a solution in video mode requires
  it); a packet that fails to decode fails the file (VideoError), nothing is written
- usage: `with Video("a.mp4") as v: for rgb, ts in v.read(30): ...`
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np


class VideoError(Exception):
    """A video that cannot be read; the message names the file and the problem."""


class Video:
    def __init__(self, path: str | Path):
        import av

        path = Path(path)
        if not path.is_file():
            raise VideoError(f"{path}: no such file" if not path.exists() else
                             f"{path}: not a file")  # fmt: skip
        try:
            self.container = av.open(str(path))
        except av.error.FFmpegError as exc:
            raise VideoError(f"{path}: not a readable video ({exc.strerror or exc})") from None
        if not self.container.streams.video:
            self.container.close()
            raise VideoError(f"{path}: no video stream")
        self.path, self.stream = path, self.container.streams.video[0]
        self.stream.thread_type = "AUTO"  # FFmpeg decodes on its own threads
        self.frames = self.stream.frames or None
        self.fps = float(self.stream.average_rate or 30)

    def read(self, max_frames: int | None = None) -> Iterator[tuple[np.ndarray, int]]:
        import av

        last = -1
        try:
            for i, frame in enumerate(self.container.decode(self.stream)):
                if max_frames is not None and i >= max_frames:
                    return
                t = frame.time if frame.time is not None else i / self.fps
                last = max(last + 1, round(t * 1000))
                yield frame.to_ndarray(format="rgb24"), last
        except av.error.FFmpegError as exc:
            raise VideoError(f"{self.path}: decoding failed ({exc.strerror or exc})") from None

    def close(self) -> None:
        self.container.close()

    def __enter__(self) -> Video:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
