"""What every solution shares: its backend, frames in, running mode, the GPU-resident path,
counts and release.

- models: a path, an imported Graph or None (the manifest's file, engine.catalog.manifest
  .model_path; a missing file is a ModelError saying `engine-fetch models`)
- engine options pass through to every Engine (OPTIONS_FOR_ENGINE: precision, storage,
  planner, texture_planner, workgroups, tune_method, transforms, cache_dir, kernels), with sync
  (also how process() waits), adapter and context; any other keyword is a TypeError
  naming it, as a mistyped option of MediaPipe's is
- backend: "auto" (the default: "xnnpack" on a CPU rasterizer adapter with LiteRT
  installed, else "webgpu"), "webgpu" or "xnnpack" (num_threads: LiteRT's threads, None:
  every core; no adapter is opened for it unless context/adapter is given);
  engine/vision/backends. It is chosen once, here; `backend.name` says which runs, and so
  does every result's `backend`
- frames: numpy RGB (H, W, 3) uint8 (BGR with bgr=True, or RGBA), or a GPUTexture /
  GPUTextureView of the caller (RGBA-style format); an empty frame, another dtype or
  channel count is a ValueError naming its shape or dtype (engine.gpu.check_image)
- running mode: "video" (timestamps, when given, must increase; the solutions track) or
  "image" (every frame on its own)
- output: "numpy" (results read back) or "gpu" (`result.gpu` holds the buffers: a
  GPU-resident frame's own, or the results uploaded where it would have put them)
- a solution's frame runs one of two ways: its GPU-resident frame (`program`, made by the
  webgpu backend for the solutions that have one: face detection, one tracked face,
  segmentation), or `track()`, its CPU-decided path over the backend's stages
- an app that owns the encoder: `prepare(frame_size)`; per frame `prepare_frame(frame)`
  before its encoder opens (the CPU-decided path runs there, with its own submits and
  reads), then `steps(view)` -> [(stage, encode(encoder))] records only GPU work (none on
  the CPU-decided path), submit, draw from `gpu`; `read()` reads a GPU-resident frame's
  results back when wanted
- counts: `counts` (engine.gpu.QueueCounts) of every submit and blocking read the solution
  made; `last_frame_counts` those of the last frame
- `close()` (or `with Solution() as s:`) destroys the GPU memory it made
- a lost device (driver reset, `device.destroy()`): process() and read() raise
  DeviceLostError; a new solution (on shared_context(), which replaces a lost context) works
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import replace

from engine.gpu import check_sync
from engine.vision.backends import open_backend

RUNNING_MODES = ("image", "video")
OUTPUTS = ("numpy", "gpu")
OPTIONS_FOR_ENGINE = ("precision", "planner", "transforms", "storage", "texture_planner",
                  "workgroups", "tune_method", "cache_dir", "kernels")  # fmt: skip
Step = tuple[str, Callable[[object], None]]


def running_mode_of(static_image_mode: bool | None, running_mode: str) -> str:
    """MediaPipe's static_image_mode, when given, as a running mode."""
    if static_image_mode is None:
        return running_mode
    return "image" if static_image_mode else "video"


def check_confidence(**values: float) -> None:
    """ValueError for a confidence threshold outside [0, 1], naming it."""
    for name, value in values.items():
        if not 0.0 <= value <= 1.0:
            raise ValueError(f"{name} must be in [0, 1], not {value}")


class Solution:
    """Base of every solution (see the module docstring)."""

    program = None  # the GPU-resident frame, when the backend made one

    def __init__(self, *, running_mode: str = "video", output: str = "numpy",
                 bgr: bool = False, context=None, adapter: str | None = None,
                 sync: str = "sleep", backend: str = "auto", num_threads: int | None = None,
                 **engine_options):  # fmt: skip
        unknown = sorted(set(engine_options) - set(OPTIONS_FOR_ENGINE))
        if unknown:
            raise TypeError(f"{type(self).__name__}() got an unexpected keyword argument "
                            f"{unknown[0]!r}")  # fmt: skip
        if running_mode not in RUNNING_MODES:
            raise ValueError(f"running_mode must be one of {RUNNING_MODES}, not {running_mode!r}")
        if output not in OUTPUTS:
            raise ValueError(f"output must be one of {OUTPUTS}, not {output!r}")
        self.running_mode, self.output, self.sync = running_mode, output, check_sync(sync)
        self.tracking = running_mode == "video"
        self.backend = open_backend(backend, context=context, adapter=adapter, sync=sync,
                                    num_threads=num_threads, bgr=bgr,
                                    engine_options=engine_options)  # fmt: skip
        if output == "gpu" and self.backend.device is None:
            raise ValueError("output='gpu' on the xnnpack backend uploads to an adapter: "
                             "pass context= or adapter=")  # fmt: skip
        self.frame_size: tuple[int, int] | None = None
        self.last_frame_counts = (0, 0)
        self._last_result = None
        self._last_ts: int | None = None
        self._closed = False

    # --- what the backend holds ----------------------------------------------------------
    @property
    def ctx(self):
        return self.backend.ctx

    @property
    def device(self):
        return self.backend.device

    @property
    def engines(self) -> dict:
        """The solution's Engines by role (none on xnnpack: nothing to warm up or plan)."""
        return self.backend.engines

    @property
    def counts(self):
        return self.backend.counts

    @property
    def readback_maps(self) -> int:
        """How many blocking reads the solution made (one map each)."""
        return self.backend.counts.reads

    # --- building ----------------------------------------------------------------------
    def prepare(self, frame_size: tuple[int, int]) -> None:
        """Set up for frames of `frame_size` (width, height); a no-op when unchanged."""
        frame_size = (int(frame_size[0]), int(frame_size[1]))
        if frame_size != self.frame_size:
            self.frame_size = frame_size
            self._configure(frame_size)

    def _configure(self, frame_size: tuple[int, int]) -> None:
        raise NotImplementedError

    # --- running -----------------------------------------------------------------------
    def process(self, frame, timestamp_ms: int | None = None):
        """Run on one frame (see the module docstring); returns this solution's result."""
        if self._closed:
            raise RuntimeError(f"{type(self).__name__} is closed")
        self._check_timestamp(timestamp_ms)
        before = self.counts.reading()
        with self.backend.guard():  # a lost device: DeviceLostError
            frame, size = self.backend.frames(frame)
            self.prepare(size)
            if self.program is not None:
                result = self.program.process(frame, timestamp_ms, self.output)
            else:
                result = self.track(frame, timestamp_ms)
        after = self.counts.reading()
        self.last_frame_counts = (after[0] - before[0], after[1] - before[1])
        self._last_result = replace(result, backend=self.backend.name)
        return self._last_result

    def track(self, frame, timestamp_ms):
        """One frame on the CPU-decided path: the result (and, with output="gpu", the
        results uploaded where draws read them)."""
        raise NotImplementedError

    def prepare_frame(self, frame):
        """The CPU part of a frame, before the caller's encoder opens: the CPU-decided path
        runs here (its own submits and reads) and its result is returned; a GPU-resident
        frame has none (None)."""
        if self.program is None:
            return self.process(frame)
        self.last_frame_counts = (0, 0)  # its work is in the caller's encoder
        return None

    def steps(self, frame_view) -> list[Step]:
        """The GPU work of one frame as (stage, encode(encoder)), in order: only recording
        (none on the CPU-decided path: prepare_frame did the work)."""
        return self.program.steps(frame_view) if self.program is not None else []

    def stream(self, frames: Iterable, fps: float = 30.0, read_ahead: int = 2) -> Iterator:
        """process() over `frames` (images, or (image, timestamp_ms) pairs; plain images
        get i * 1000 / fps). `frames` is iterated on a worker thread up to `read_ahead`
        items ahead (engine/vision/read_ahead.py: a decoding generator's next frame is
        decoded while this one is processed; results are the same); 0: in this thread."""
        from engine.vision.read_ahead import ReadAhead

        source = ReadAhead(frames, read_ahead) if read_ahead > 0 else frames
        try:
            for i, item in enumerate(source):
                if isinstance(item, tuple):
                    yield self.process(*item)
                else:
                    yield self.process(item, round(i * 1000.0 / fps))
        finally:
            if read_ahead > 0:
                source.close()

    def read(self, timestamp_ms: int | None = None):
        """The results of the last frame: read back from a GPU-resident frame (blocks),
        else the last CPU-decided result."""
        if self.program is None:
            return self._last_result
        with self.backend.guard():
            result = self.program.read(timestamp_ms)
        return replace(result, backend=self.backend.name)

    def _check_timestamp(self, ts: int | None) -> None:
        if ts is None or self.running_mode == "image":
            return
        if self._last_ts is not None and ts <= self._last_ts:
            raise ValueError(
                f"timestamp {ts} ms is not after the previous one ({self._last_ts} ms): a "
                f"video stream's timestamps must increase (running_mode='image' for stills)"
            )
        self._last_ts = ts

    # --- release -----------------------------------------------------------------------
    def close(self) -> None:
        """Destroy the GPU memory this solution made (engines' tensors, its own buffers)."""
        if self._closed:
            return
        self._closed = True
        for uploads in self._uploads():
            uploads.destroy()
        self.backend.close()

    def _uploads(self) -> list:
        """What the solution uploads its results into for output="gpu" (engine/vision
        /uploads.py)."""
        return []

    @property
    def upload_bytes(self) -> int:
        """Bytes of results uploaded for output="gpu" without a GPU-resident frame."""
        return sum(u.uploads for u in self._uploads())

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()
