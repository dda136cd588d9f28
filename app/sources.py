"""Frame sources (OpenCV) and the one upload per frame into a GPU texture.

- input: `--input` text: a camera index ("0"), a video file or a still image
- output: `Frame`s (index, BGR uint8 array, capture time); `FrameUploader` turns each
  into a bgra8unorm texture with one `queue.write_texture`
- options: `limit` stops after N frames (a still repeats until then)
- usage: `src = open_source("assets/sample.mp4"); frame = src.read(); up.upload(frame.bgr)`

Upload format, measured on lavapipe for a 640x480 frame: cv2 BGR->BGRA 0.04 ms, BGR->RGBA
0.09 ms, write_texture ~1.3-1.7 ms, raw BGR write_buffer ~1.4 ms. The write dominates, so
the frame is converted to BGRA on the CPU (cheapest) and lands in a bgra8unorm texture:
sampling it returns RGBA, the swizzle is free in the texture format.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from app.errors import AppError

IMAGE_SUFFIXES = {".png", ".jpg", ".jpeg", ".bmp", ".webp", ".tif", ".tiff"}


@dataclass
class Frame:
    index: int
    bgr: np.ndarray  # (H, W, 3) uint8
    t_capture: float  # time.perf_counter() when the frame was in hand


class FrameSource:
    """Base: `read()` gives the next Frame or None at the end."""

    kind = "source"

    def __init__(self, name: str, size: tuple[int, int], fps: float, count: int | None):
        self.name, self.size, self.fps, self.count = name, size, fps, count
        self.index = 0

    def read(self) -> Frame | None:
        bgr = self._next()
        if bgr is None:
            return None
        frame = Frame(self.index, bgr, time.perf_counter())
        self.index += 1
        return frame

    def _next(self) -> np.ndarray | None:
        raise NotImplementedError

    def close(self) -> None:
        pass


class _Capture(FrameSource):
    """Camera or video through cv2.VideoCapture; the first frame is read at open."""

    def __init__(self, cap, name: str, kind: str, limit: int | None):
        ok, first = cap.read()
        if not ok or first is None:
            cap.release()
            raise AppError(
                f"no frames from camera {name}; use --input FILE (a video or an image)"
                if kind == "camera"
                else f"{name}: cannot decode any frame (not a video OpenCV can read)"
            )
        h, w = first.shape[:2]
        fps = cap.get(cv2.CAP_PROP_FPS) or 30.0
        count = int(cap.get(cv2.CAP_PROP_FRAME_COUNT)) if kind == "video" else None
        if count is not None and count <= 0:
            count = None
        if limit is not None:
            count = min(count, limit) if count is not None else limit
        super().__init__(name, (w, h), fps if fps > 0 else 30.0, count)
        self.kind, self._cap, self._first = kind, cap, first

    def _next(self):
        if self.count is not None and self.index >= self.count:
            return None
        if self._first is not None:
            frame, self._first = self._first, None
            return frame
        ok, frame = self._cap.read()
        return frame if ok else None

    def close(self) -> None:
        self._cap.release()


class StillSource(FrameSource):
    """One image, repeated `limit` times (forever when None)."""

    kind = "image"

    def __init__(self, path: Path, limit: int | None):
        bgr = cv2.imread(str(path), cv2.IMREAD_COLOR)
        if bgr is None:
            raise AppError(f"{path}: cannot read the image (unknown or corrupt format)")
        super().__init__(str(path), (bgr.shape[1], bgr.shape[0]), 30.0, limit)
        self._bgr = bgr

    def _next(self):
        if self.count is not None and self.index >= self.count:
            return None
        return self._bgr


def open_source(spec: str, limit: int | None = None) -> FrameSource:
    """A camera index ("0"), a video file or an image; AppError with a hint otherwise."""
    if spec.isdigit():
        cap = cv2.VideoCapture(int(spec))
        if not cap.isOpened():
            raise AppError(f"no camera at index {spec}; use --input FILE (a video or an image)")
        return _Capture(cap, spec, "camera", limit)
    path = Path(spec)
    if not path.exists():
        raise AppError(f"{spec}: no such file (expected a camera index, a video or an image)")
    if path.is_dir():
        raise AppError(f"{spec}: is a directory, not a video or an image")
    if path.suffix.lower() in IMAGE_SUFFIXES:
        return StillSource(path, limit)
    cap = cv2.VideoCapture(str(path))
    if not cap.isOpened():
        raise AppError(f"{spec}: cannot open the video (unreadable or unsupported format)")
    return _Capture(cap, spec, "video", limit)


class FrameUploader:
    """A bgra8unorm texture the size of the frames, filled by one write_texture per frame."""

    FORMAT = "bgra8unorm"

    def __init__(self, device, size: tuple[int, int]):
        import wgpu

        self.device, self.size = device, size
        w, h = size
        self.texture = device.create_texture(
            size=(w, h, 1),
            format=self.FORMAT,
            usage=wgpu.TextureUsage.TEXTURE_BINDING | wgpu.TextureUsage.COPY_DST,
            label="camera frame",
        )
        self.view = self.texture.create_view()
        self._bgra = np.empty((h, w, 4), np.uint8)
        self.uploads = 0

    def upload(self, bgr: np.ndarray) -> None:
        """BGR frame -> texture (one CPU conversion, one write_texture)."""
        w, h = self.size
        if bgr.shape[:2] != (h, w):  # a camera or file that changes size mid-stream
            bgr = cv2.resize(bgr, (w, h), interpolation=cv2.INTER_AREA)
        cv2.cvtColor(bgr, cv2.COLOR_BGR2BGRA, dst=self._bgra)
        self.device.queue.write_texture(
            {"texture": self.texture},
            self._bgra,
            {"bytes_per_row": w * 4, "rows_per_image": h},
            (w, h, 1),
        )
        self.uploads += 1
