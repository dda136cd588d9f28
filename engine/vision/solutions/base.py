"""What every solution shares: models, engines, frames in, running mode, GPU release.

- models: a path, an imported Graph or None (the manifest's file, engine.catalog.manifest
  .model_path; a missing file is a ModelError saying `engine-fetch models`)
- engine options pass through to every Engine: precision, storage, planner, sync (also
  how process() waits), adapter, context, texture_planner, workgroups, transforms, cache_dir
- backend: "auto" (the default: "xnnpack" on a CPU rasterizer adapter with LiteRT
  installed, else "webgpu"; engine/vision/backend.py), "webgpu" or "xnnpack" (the models on
  LiteRT's XNNPACK with `num_threads`, None: every core; pre- and post-processing in
  numpy/OpenCV: engine/vision/cpu_roi_model.py, solutions/cpu_detector.py; no adapter is
  opened for it unless `context`/`adapter` is given). `backend` says which runs, and so
  does every result's `backend`
- frames: numpy RGB (H, W, 3) uint8 (BGR with bgr=True, or RGBA), or a GPUTexture /
  GPUTextureView of the caller (RGBA-style format); engine/vision/_gpu.FrameInput
- running mode: "video" (timestamps, when given, must increase; FaceMesh tracks) or
  "image" (every frame on its own)
- output: "numpy" (results read back, one map per frame) or "gpu" (nothing read back;
  `result.gpu` holds the buffers)
- GPU-resident use (an app that owns the encoder): `prepare(frame_size)`, then per frame
  `steps(view)` -> [(stage, encode(encoder))], submit, draw from `gpu`; `read()` reads the
  results back when wanted
- `close()` (or `with Solution() as s:`) destroys the GPU memory it made
- a lost device (driver reset, `device.destroy()`): process() and read() raise
  DeviceLostError; a new solution (on shared_context(), which replaces a lost context) works
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import replace
from pathlib import Path

from engine.errors import ModelError
from engine.gpu import device_guard
from engine.vision.backend import choose_backend
from engine.vision.cpu_frames import CpuFrames
from engine.vision.cpu_roi_model import CpuRoiModel, NoReadback
from engine.vision.gpu_stage import FrameInput, Readback, release_engine

RUNNING_MODES = ("image", "video")
OUTPUTS = ("numpy", "gpu")
Step = tuple[str, Callable[[object], None]]


def resolve_model(model, default: str):
    """A Graph, or the path of `model` (None: the manifest's `default`), checked to exist."""
    from engine.model.ir import Graph

    if isinstance(model, Graph):
        return model
    if model is None:
        from engine.catalog.manifest import model_path

        path = model_path(default)
        if not path.is_file():
            raise ModelError(
                f"{path}: the {default} model is not fetched yet; run `engine-fetch models` "
                f"(or `make models` in a checkout) to fetch MediaPipe's models"
            )
        return path
    path = Path(model)
    if not path.is_file():
        raise ModelError(f"{path}: no such model file")
    return path


def manifest_entry(model):
    """The manifest entry of a model file (by file name), or None."""
    from engine.catalog.manifest import load_manifest
    from engine.model.ir import Graph

    name = Path(model.name if isinstance(model, Graph) else model).name
    return next((e for e in load_manifest().models if e.file == name), None)


class Solution:
    """Base of FaceDetector, FaceMesh and SelfieSegmenter (see the module docstring)."""

    def __init__(self, *, running_mode: str = "video", output: str = "numpy",
                 bgr: bool = False, context=None, adapter: str | None = None,
                 sync: str = "sleep", backend: str = "auto", num_threads: int | None = None,
                 **engine_options):  # fmt: skip
        from engine.gpu import adapter_class, check_sync, shared_context

        if engine_options.get("kernels") == "staged":  # its stages record engines' encode()
            raise ValueError("kernels='staged' swaps an engine's buffers between runs, which "
                             "the solutions' GPU stages record into: use 'optimized' or "
                             "'compact'")  # fmt: skip
        if running_mode not in RUNNING_MODES:
            raise ValueError(f"running_mode must be one of {RUNNING_MODES}, not {running_mode!r}")
        if output not in OUTPUTS:
            raise ValueError(f"output must be one of {OUTPUTS}, not {output!r}")
        self.running_mode, self.output, self.sync = running_mode, output, check_sync(sync)
        needs_adapter = backend != "xnnpack" or context is not None or adapter is not None
        self.ctx = (context or shared_context(adapter)) if needs_adapter else None
        self.device = self.ctx.device if self.ctx is not None else None
        self.backend = choose_backend(backend, adapter_class(self.ctx.info) if self.ctx else None)
        if self.backend == "xnnpack" and output == "gpu" and self.ctx is None:
            raise ValueError("output='gpu' on the xnnpack backend uploads to an adapter: "
                             "pass context= or adapter=")  # fmt: skip
        self.num_threads = num_threads
        self.engine_options = {"sync": sync, **engine_options}
        self.engines: dict[str, object] = {}
        if self.backend == "xnnpack":
            self.frames, self.readback = CpuFrames(self.device, bgr=bgr), NoReadback()
        else:
            self.frames = FrameInput(self.device, bgr=bgr)
            self.readback = Readback(self.device, sync)
        self.frame_size: tuple[int, int] | None = None
        self._last_result = None  # xnnpack: read() gives it
        self._last_ts: int | None = None
        self._closed = False

    # --- building ----------------------------------------------------------------------
    def _engine(self, role: str, model, default: str):
        """The model of `role` on this solution's backend: an Engine or an XnnpackModel."""
        from engine.gpu import Engine
        from engine.model.importer import load_tflite

        model = resolve_model(model, default)
        if self.backend == "xnnpack":
            from engine.vision.xnnpack import XnnpackModel

            self.engines[role] = XnnpackModel(model, self.num_threads)
            return self.engines[role]
        graph = model if not isinstance(model, Path) else load_tflite(model)
        self.engines[role] = Engine(graph, context=self.ctx, **self.engine_options)
        return self.engines[role]

    def _roi_model(self, engine, value_range, border: str, keep_aspect: bool):
        """RoiModel on webgpu, its twin CpuRoiModel on xnnpack."""
        from engine.vision.roi_model import RoiModel

        if self.backend == "xnnpack":
            return CpuRoiModel(engine, value_range, border, keep_aspect)
        return RoiModel(engine, value_range, border, keep_aspect, sync=self.sync)

    def prepare(self, frame_size: tuple[int, int]) -> None:
        """Set up for frames of `frame_size` (width, height); a no-op when unchanged."""
        frame_size = (int(frame_size[0]), int(frame_size[1]))
        if frame_size != self.frame_size:
            self.frame_size = frame_size
            self._configure(frame_size)

    def _configure(self, frame_size: tuple[int, int]) -> None:
        raise NotImplementedError

    # --- running -----------------------------------------------------------------------
    def steps(self, frame_view) -> list[Step]:
        """The GPU work of one frame as (stage, encode(encoder)), in order."""
        raise NotImplementedError

    def process(self, frame, timestamp_ms: int | None = None):
        """Run on one frame (see the module docstring); returns this solution's result."""
        if self._closed:
            raise RuntimeError(f"{type(self).__name__} is closed")
        self._check_timestamp(timestamp_ms)
        if self.ctx is None:
            result = self._process(frame, timestamp_ms)
        else:
            with device_guard(self.ctx):  # a lost device: DeviceLostError
                result = self._process(frame, timestamp_ms)
        return result if self.backend == "webgpu" else replace(result, backend=self.backend)

    def _process(self, frame, timestamp_ms):
        view, size = self.frames(frame)
        self.prepare(size)
        if self.backend == "xnnpack":
            self._last_result = self._process_cpu(view, timestamp_ms)
            return self._last_result
        encoder = self.device.create_command_encoder()
        for _, encode in self._frame_steps(view):
            encode(encoder)
        numpy = self.output == "numpy"
        if numpy:
            self._encode_readback(encoder)
        self.device.queue.submit([encoder.finish()])
        if not numpy:
            return self._gpu_result(timestamp_ms)
        return self._result(self.readback.read(), timestamp_ms)

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
        """Read the results of the last submitted frame back (blocks); GPU-resident use.
        On xnnpack: the last frame's results (numbers already)."""
        if self.backend == "xnnpack":
            return self._last_result
        with device_guard(self.ctx):
            encoder = self.device.create_command_encoder()
            self._encode_readback(encoder)
            self.device.queue.submit([encoder.finish()])
            return self._result(self.readback.read(), timestamp_ms)

    def _cpu_steps(self, frame) -> list[Step]:
        """steps() on xnnpack: process() the frame (a texture is read back, CpuFrames) when
        the encoder is recorded; output="gpu" uploads the results into `gpu`'s buffers."""
        return [("inference", lambda _encoder: self.process(frame))]

    def _process_cpu(self, image, timestamp_ms):
        """The result of one RGB frame on the xnnpack backend (solutions that use the
        base's process())."""
        raise NotImplementedError

    def _frame_steps(self, view) -> list[Step]:
        """The steps process() records (FaceMesh leaves the detector out while tracking)."""
        return self.steps(view)

    def _encode_readback(self, encoder) -> None:
        self.readback.encode(encoder)

    def _result(self, data: dict[str, bytes], timestamp_ms):
        raise NotImplementedError

    def _gpu_result(self, timestamp_ms):
        raise NotImplementedError

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
        self.frames.destroy()
        for buf in self._owned_buffers():
            buf.destroy()
        if self.backend == "xnnpack":
            return
        for engine in self.engines.values():
            release_engine(engine)
        self.readback.destroy()

    def _owned_buffers(self) -> list:
        return []

    @property
    def upload_bytes(self) -> int:
        """Bytes of results uploaded for output="gpu" on xnnpack (solutions/cpu_upload.py)."""
        return sum(getattr(b, "uploads", 0) for b in self._uploaders())

    def _uploaders(self) -> list:
        return []

    @property
    def readback_maps(self) -> int:
        """How many times results were read back (one map each)."""
        return self.readback.maps

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()
