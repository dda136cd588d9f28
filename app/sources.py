"""Frame sources and the one upload per frame into a GPU texture.

- input: `--input` text: a camera index ("0", OpenCV), a video file (PyAV) or a still image
- output: `Frame`s (index in the input, BGR uint8 array, capture time); `FrameUploader`
  turns each into a bgra8unorm texture with one `queue.write_texture`
- options: `limit` stops after N frames (a still repeats until then)
- usage: `src = open_source("assets/sample.mp4"); frame = src.read(); up.upload(frame.bgr)`

Damaged video files: PyAV demuxes packet by packet, so a packet that fails to decode is
skipped and the next one decodes; `skipped` lists the frames the container declares that
never came out (ranges, with the reason), `concealed` the frames the decoder repaired.
OpenCV's read loop stops at the first failed read and cannot say which frame failed
(measured on seeded damaged copies of the sample clip, docs/benchmarks.md "Damaged
video"). FFmpeg's own log stays off unless `verbose` (ar-demo --verbose).

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


@dataclass
class Skipped:
    """Frames first..last (inclusive, indices in the input) that were not read, and why."""

    first: int
    last: int
    reason: str

    @property
    def count(self) -> int:
        return self.last - self.first + 1

    def as_dict(self) -> dict:
        return {"first": self.first, "last": self.last, "count": self.count,
                "reason": self.reason}  # fmt: skip


class FrameSource:
    """Base: `read()` gives the next Frame or None at the end; `frames_read` counts them.

    `count` is the number of frames expected (the container's, a --frames limit, or None);
    `skipped` the frames of the input that could not be read (damaged video only)."""

    kind = "source"

    def __init__(self, name: str, size: tuple[int, int], fps: float, count: int | None):
        self.name, self.size, self.fps, self.count = name, size, fps, count
        self.frames_read = 0
        self.skipped: list[Skipped] = []
        self.concealed: list[Skipped] = []

    @property
    def index(self) -> int:  # the frames read so far (older name)
        return self.frames_read

    @property
    def frames_skipped(self) -> int:
        return sum(s.count for s in self.skipped)

    def read(self) -> Frame | None:
        got = self._next()
        if got is None:
            return None
        bgr, index = got if isinstance(got, tuple) else (got, self.frames_read)
        frame = Frame(index, bgr, time.perf_counter())
        self.frames_read += 1
        return frame

    def _next(self) -> np.ndarray | tuple[np.ndarray, int] | None:
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
        if self.count is not None and self.frames_read >= self.count:
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
        if self.count is not None and self.frames_read >= self.count:
            return None
        return self._bgr


def _merge(ranges: list[Skipped], first: int, last: int, reason: str) -> None:
    """Add frames first..last to a list of ranges (joined to the last one when adjacent)."""
    if ranges and ranges[-1].last + 1 >= first and ranges[-1].reason == reason:
        ranges[-1].last = max(ranges[-1].last, last)
    else:
        ranges.append(Skipped(first, last, reason))


class VideoSource(FrameSource):
    """A video file through PyAV: packet by packet, past the ones that fail to decode."""

    kind = "video"

    def __init__(self, path: Path, limit: int | None, verbose: bool = False):
        import av

        # FFmpeg's log: off (OpenCV's reader printed 2,386 lines on one damaged clip), or
        # its warnings through Python's logging ("libav.<codec>") with --verbose
        av.logging.set_level(av.logging.WARNING if verbose else None)
        try:
            self._container = av.open(str(path))
        except (av.error.FFmpegError, OSError) as exc:
            raise AppError(f"{path}: cannot open the video ({_reason(exc)}){_mp4_hint(path)}"
                           ) from None  # fmt: skip
        if not self._container.streams.video:
            self._container.close()
            raise AppError(f"{path}: no video stream in the file")
        self._stream = stream = self._container.streams.video[0]
        rate = stream.average_rate or stream.guessed_rate
        self._rate = float(rate) if rate else 30.0
        self._tb = float(stream.time_base) if stream.time_base else 0.0
        self._start = stream.start_time or 0
        self.declared = stream.frames or None
        super().__init__(str(path), (0, 0), self._rate, None)  # size: the first frame's
        self._frames = self._decode()
        self._next_index = 0  # the index the next frame should have
        self._error: str | None = None  # the last decode error, for the skip reason
        self._stop = False
        first = next(self._frames, None)
        if first is None:
            self.close()
            raise AppError(f"{path}: cannot decode any frame ({self._error or 'no frames'})")
        bgr, _ = first
        self.size = (bgr.shape[1], bgr.shape[0])
        self.count = self.declared if limit is None else min(self.declared or limit, limit)
        self._first = first

    def _decode(self):
        """(BGR, index in the input) per decodable frame; records the skips on the way."""
        import av

        packets = self._container.demux(self._stream)
        while True:
            try:
                packet = next(packets)
            except StopIteration:
                return
            except av.error.FFmpegError as exc:  # the container itself is cut or damaged
                self._error = f"demuxer: {_reason(exc)}"
                return
            try:
                frames = packet.decode()
            except av.error.FFmpegError as exc:
                self._error = _reason(exc)
                continue
            for f in frames:
                yield self._frame(f)

    def _frame(self, f) -> tuple[np.ndarray, int]:
        """The frame's index from its timestamp; a gap after a decode error is skipped
        frames (a gap without one is a variable frame rate: the index just follows)."""
        index = self._next_index
        if f.pts is not None and self._tb:
            at = round((f.pts - self._start) * self._tb * self._rate)
            if at > index and self._error is not None:
                _merge(self.skipped, index, at - 1, self._error)
            index = max(index, at)
        if f.is_corrupt:
            _merge(self.concealed, index, index, "decoded with errors concealed")
        self._next_index, self._error = index + 1, None
        return f.to_ndarray(format="bgr24"), index

    def _next(self):
        if self.count is not None and self.frames_read >= self.count:
            return None
        if self._first is not None:
            got, self._first = self._first, None
            return got
        got = next(self._frames, None) if self._frames is not None else None
        if got is None:
            self._finish()
        return got

    def _finish(self) -> None:
        """At the end of the file: the declared frames neither read nor skipped are skipped
        at the end (a file cut short; placed after the last frame read)."""
        missing = (self.declared or 0) - self.frames_read - self.frames_skipped
        if missing > 0 and not self._stop:
            reason = self._error or "the file ends early (truncated?)"
            _merge(self.skipped, self._next_index, self._next_index + missing - 1, reason)
        self._stop = True

    def close(self) -> None:
        # the generator holds `self`: closing it breaks the cycle, so the decoder's buffers
        # (~2.4 MB) go now, not at the next full garbage collection (measured in the soak)
        if self._frames is not None:
            self._frames.close()
            self._frames = None
        self._container.close()


def _mp4_hint(path: Path) -> str:
    """For an mp4 (its first box is `ftyp`) without its index box: it was cut short."""
    try:
        with open(path, "rb") as f:
            head = f.read(12)
    except OSError:
        return ""
    return "; an mp4 cut short before its index box cannot be read" if head[4:8] == b"ftyp" else ""


def _reason(exc: Exception) -> str:
    """FFmpeg's error without the errno and the file name."""
    text = getattr(exc, "strerror", None) or str(exc)
    return str(text).strip()


def open_source(spec: str, limit: int | None = None, *, reader: str = "pyav",
                verbose: bool = False) -> FrameSource:  # fmt: skip
    """A camera index ("0"), a video file or an image; AppError with a hint otherwise.
    `reader`: "pyav" (video files past damaged frames) or "opencv" (cv2.VideoCapture)."""
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
    if reader == "pyav":
        return VideoSource(path, limit, verbose)
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
            # COPY_SRC: a texture given to an xnnpack solution is read back (CpuFrames)
            usage=wgpu.TextureUsage.TEXTURE_BINDING
            | wgpu.TextureUsage.COPY_DST
            | wgpu.TextureUsage.COPY_SRC,
            label="camera frame",
        )
        self.view = self.texture.create_view()
        self._bgra = np.empty((h, w, 4), np.uint8)
        self.host = None  # the last frame uploaded, as BGR (H, W, 3): the xnnpack models read it
        self.uploads = 0

    def upload(self, bgr: np.ndarray) -> None:
        """BGR frame -> texture (one CPU conversion, one write_texture)."""
        w, h = self.size
        if bgr.shape[:2] != (h, w):  # a camera or file that changes size mid-stream
            bgr = cv2.resize(bgr, (w, h), interpolation=cv2.INTER_AREA)
        self.host = bgr
        cv2.cvtColor(bgr, cv2.COLOR_BGR2BGRA, dst=self._bgra)
        self.device.queue.write_texture(
            {"texture": self.texture},
            self._bgra,
            {"bytes_per_row": w * 4, "rows_per_image": h},
            (w, h, 1),
        )
        self.uploads += 1

    def copy_into(self, encoder, target) -> bool:
        """Record a copy of the frame into the `target` texture where it can take one (the
        frame's size and format, COPY_DST usage: ar-demo's headless target); False if not."""
        import wgpu

        fits = (tuple(target.size[:2]) == tuple(self.size) and target.format == self.FORMAT
                and target.usage & wgpu.TextureUsage.COPY_DST)  # fmt: skip
        if fits:
            w, h = self.size
            encoder.copy_texture_to_texture({"texture": self.texture}, {"texture": target},
                                            (w, h, 1))  # fmt: skip
        return bool(fits)
