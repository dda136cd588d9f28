"""The webgpu backend: the solutions' models on the engine (WGSL on the WebGPU adapter).

- models: `Engine`s on the backend's context, with the solution's engine options
- frames: numpy frames go up into a texture (engine.gpu.FrameInput); a caller's texture is
  used as it is
- detector: `GpuDetector` (letterbox or crop pre-process -> the detector -> SSD decode +
  weighted NMS, engine/vision/detections.py): `detect(view)` is one submit and one read;
  `steps(view)` records the same into a caller's encoder, its records staying on the GPU
- crops: engine/vision/roi_model.RoiModel (several crops, one submit, batched when it pays)
- GPU-resident frames: `gpu_stage(build)` makes a solution's (FaceMesh's GPU tracking, the
  detector's and the segmenter's encode path)
- counts: every submit and blocking read its stages make (`counts`, engine.gpu.QueueCounts)
"""

from __future__ import annotations

from pathlib import Path

from engine.gpu import (
    Engine,
    FrameInput,
    QueueCounts,
    Readback,
    device_guard,
    release_engine,
)
from engine.vision.backends.models import resolve_model
from engine.vision.detections import SsdDecoder
from engine.vision.detector import input_name, parse_records, ssd_outputs
from engine.vision.image_to_tensor import letterbox_matrix
from engine.vision.preprocess import Preprocessor


class WebGpu:
    """The webgpu backend of one solution (see the module docstring)."""

    name = "webgpu"

    def __init__(self, ctx, *, sync: str, num_threads: int | None, bgr: bool,
                 engine_options: dict):  # fmt: skip
        if engine_options.get("kernels") == "staged":  # the stages record engines' encode()
            raise ValueError("kernels='staged' swaps an engine's buffers between runs, which "
                             "the solutions' GPU stages record into: use 'optimized' or "
                             "'compact'")  # fmt: skip
        self.ctx, self.device, self.sync = ctx, ctx.device, sync
        self.engine_options = {"sync": sync, **engine_options}
        self.counts = QueueCounts()
        self.frames = FrameInput(self.device, bgr=bgr)
        self.engines: dict[str, Engine] = {}  # role -> its engine (warm-up, memory plans)
        self._stages: list = []  # what close() destroys

    def guard(self):
        """A lost device raises DeviceLostError inside this block."""
        return device_guard(self.ctx)

    def model(self, role: str, model, default: str) -> Engine:
        """The Engine of `model` (a path, a Graph, or None: the manifest's `default`)."""
        from engine.model.importer import load_tflite

        model = resolve_model(model, default)
        graph = load_tflite(model) if isinstance(model, Path) else model
        self.engines[role] = Engine(graph, context=self.ctx, **self.engine_options)
        return self.engines[role]

    def detector(self, engine, spec, max_detections: int, value_range, border: str):
        detector = GpuDetector(engine, spec, max_detections, value_range, border,
                               self.readback())  # fmt: skip
        self._stages.append(detector)
        return detector

    def crops(self, engine, value_range, border: str, keep_aspect: bool):
        from engine.vision.roi_model import RoiModel

        crops = RoiModel(engine, value_range, border, keep_aspect, sync=self.sync,
                         counts=self.counts)  # fmt: skip
        self._stages.append(crops)
        return crops

    def readback(self) -> Readback:
        return Readback(self.device, self.sync, self.counts)

    def gpu_stage(self, build):
        """A solution's GPU-resident frame: `build()` (None on a backend without one)."""
        stage = build()
        self._stages.append(stage)
        return stage

    reads_host_frames = False  # the stages sample a texture: give it the caller's

    def describe(self) -> list[dict]:
        """Each model: its role, dispatches, precision, kernels and memory plan."""
        out = []
        for role, e in self.engines.items():
            m = e.memory
            out.append({
                "name": Path(e.graph.name).stem, "role": role, "backend": self.name,
                "dispatches": e.dispatch_count, "precision": e.precision, "kernels": e.kernels,
                "memory": {"strategy": m.strategy, "total_bytes": int(m.total_bytes),
                           "naive_bytes": int(m.naive_bytes), "lower_bound": int(m.lower_bound),
                           "objects": int(m.objects)},
            })  # fmt: skip
        return out

    def close(self) -> None:
        """Destroy the GPU memory of the frames, the stages and the engines."""
        self.frames.destroy()
        for stage in self._stages:
            stage.destroy()
        for engine in self.engines.values():
            release_engine(engine)


class GpuDetector:
    """Letterbox (or crop) pre-process -> detector -> decode + NMS on the GPU (the detector
    stage, engine/vision/detector.py)."""

    def __init__(self, engine, spec, max_detections: int, value_range, border: str,
                 readback: Readback):  # fmt: skip
        self.engine, self.spec = engine, spec
        self.pre = Preprocessor(engine, input_name(engine.graph), value_range, border=border)
        self.decoder = SsdDecoder(engine, spec, names=ssd_outputs(engine.graph),
                                  max_detections=max_detections)  # fmt: skip
        self.readback = readback
        self.add_readback(readback)

    def configure(self, frame_size: tuple[int, int]) -> None:
        self.set_transform(letterbox_matrix(frame_size, self.spec.input_size), frame_size)

    def set_transform(self, frame_from_tensor, frame_size) -> None:
        """The crop the detector sees (normalised tensor -> frame pixels) and the frame size."""
        self.pre.set_roi(frame_from_tensor)
        self.decoder.set_frame_transform(frame_from_tensor, frame_size)

    def detect(self, view) -> tuple:
        """The detector alone on `view`: one submit, its records read back and parsed."""
        device = self.engine.ctx.device
        encoder = device.create_command_encoder()
        for _, encode in self.steps(view):
            encode(encoder)
        self.readback.encode(encoder)
        self.readback.counts.submit(device, encoder)
        return self.parse(self.readback.read())

    def steps(self, view, gate=None) -> list:
        """The detector's work for a caller's encoder; `gate` ((buffer, byte offset) of a
        u32 word a GPU stage wrote): the model runs only where it is non-zero (a GPU frame
        that tracks its objects skips it; Engine.encode)."""
        return [
            ("preprocess", lambda enc: self.pre.encode(enc, view)),
            ("inference", lambda enc: self.engine.encode(enc, gate)),
            ("postprocess", self.decoder.encode),
        ]

    def add_readback(self, readback: Readback) -> None:
        """Read this detector's records through `readback` (a GPU-resident frame's)."""
        readback.add("det_status", self.decoder.status, 0, 16)
        readback.add("det_records", self.decoder.detections)

    def parse(self, data: dict[str, bytes]) -> tuple:
        d = self.decoder
        return parse_records(data["det_status"], data["det_records"], d.record,
                             d.max_detections)  # fmt: skip

    def destroy(self) -> None:
        d = self.decoder
        for buf in (self.pre.roi, d.anchors, d.params, d.detections, d.status, d.args):
            buf.destroy()
        self.readback.destroy()
