"""The xnnpack backend: the solutions' models on LiteRT's XNNPACK (the CPU cores).

- models: `XnnpackModel` (below): numpy in, numpy out, the engine's import of the file
  beside it (the solutions read output names and shapes from its graph as from an Engine);
  a model holding MediaPipe's landmark custom ops (face_landmark_with_attention) runs as
  LiteRT segments around them (litert_segments.py)
- frames: numpy RGB (engine/vision/backends/cpu_stages.CpuFrames; a caller's texture is
  read back once)
- detector and crops: CpuDetector and CpuCrops (cpu_stages.py): the pre-processing of
  engine/vision/image_to_tensor.py (ImageToTensorCalculator's values exactly), the model,
  the post-processing in numpy, as MediaPipe's CPU graphs run the same files
- no GPU-resident frames (`gpu_stage` gives None): with output="gpu" the solutions upload
  their results where the webgpu backend's stages would have left them
  (engine/vision/uploads.py); an adapter is opened only when `context` or `adapter` is
  given (or output="gpu")
- usage (a model alone):
    model = XnnpackModel(model_path("face_landmark"))
    outputs = model.run(np.zeros((1, 192, 192, 3), np.float32))
"""

from __future__ import annotations

import os
import sys
from contextlib import nullcontext
from pathlib import Path

import numpy as np

from engine.errors import ModelError
from engine.gpu import QueueCounts
from engine.native_log import captured_fd2, without_info
from engine.vision.backends import require_litert
from engine.vision.backends.cpu_stages import CpuCrops, CpuDetector, CpuFrames
from engine.vision.backends.litert_segments import SegmentedModel, needs_split
from engine.vision.backends.models import resolve_model


class XnnpackModel:
    """One model on LiteRT's CPU interpreter (see the module docstring)."""

    def __init__(self, model, num_threads: int | None = None):
        from engine.model.importer import load_tflite
        from engine.model.ir import Graph

        interpreter = require_litert()
        if isinstance(model, Graph):
            self.graph = model
            source = Path(model.name) if Path(model.name).is_file() else None
        else:
            source = Path(model)
            self.graph = load_tflite(source)
        threads = num_threads or os.cpu_count() or 1
        # LiteRT prints "INFO: Created TensorFlow Lite XNNPACK delegate for CPU." on fd 2 at
        # the first model: kept off stderr (a CLI's error stays one line), the rest re-printed
        with captured_fd2() as log:
            if needs_split(self.graph):  # ops LiteRT lacks: LiteRT around them
                self.segments = SegmentedModel(self.graph, interpreter, threads)
            else:
                self.segments = None
                self._load(interpreter, source, threads)
        sys.stderr.write(without_info(log[0]))
        self.num_threads = threads
        self.runs = 0
        if self.segments is not None:
            self.input_shape = self.segments.input_shape
            return
        (inp,) = self.interpreter.get_input_details()
        self.input_index, self.input_name = inp["index"], inp["name"]
        self.input_shape = tuple(int(d) for d in inp["shape"])
        by_name = {d["name"]: d["index"] for d in self.interpreter.get_output_details()}
        names = [self.graph.tensors[t].name for t in self.graph.outputs]
        self.outputs = [(name, by_name[name]) for name in names]

    def _load(self, interpreter, source: Path | None, threads: int) -> None:
        """LiteRT's interpreter for the file (or the graph written back), tensors allocated."""
        try:
            if source is not None:
                self.interpreter = interpreter(model_path=str(source), num_threads=threads)
            else:
                from engine.model.writer import write_tflite

                content = write_tflite(self.graph)
                self.interpreter = interpreter(model_content=content, num_threads=threads)
            self.interpreter.allocate_tensors()
        except (RuntimeError, ValueError) as exc:
            raise ModelError(f"{self.graph.name}: LiteRT cannot load the model ({exc})") from exc

    @property
    def input_size(self) -> tuple[int, int]:
        """The input image's (width, height)."""
        _, h, w, _ = self.input_shape
        return (w, h)

    def run(self, tensor: np.ndarray) -> dict[str, np.ndarray]:
        """Every output for one input tensor of the model's shape (float32)."""
        if self.segments is not None:
            self.runs += 1
            return self.segments.run(tensor)
        it = self.interpreter
        it.set_tensor(self.input_index, np.ascontiguousarray(tensor, np.float32))
        it.invoke()
        self.runs += 1
        return {name: it.get_tensor(index) for name, index in self.outputs}


class Xnnpack:
    """The xnnpack backend of one solution (see the module docstring)."""

    name = "xnnpack"

    def __init__(self, ctx, *, sync: str, num_threads: int | None, bgr: bool,
                 engine_options: dict):  # fmt: skip
        self.ctx, self.device = ctx, (ctx.device if ctx is not None else None)
        self.num_threads = num_threads
        self.counts = QueueCounts()
        self.frames = CpuFrames(self.device, bgr=bgr, counts=self.counts)
        self.engines: dict = {}  # no Engine: nothing to warm up or plan on the GPU
        self.models: dict[str, XnnpackModel] = {}

    def guard(self):
        if self.ctx is None:
            return nullcontext()
        from engine.gpu import device_guard

        return device_guard(self.ctx)

    def model(self, role: str, model, default: str) -> XnnpackModel:
        self.models[role] = XnnpackModel(resolve_model(model, default), self.num_threads)
        return self.models[role]

    def detector(self, model, spec, max_detections: int, value_range, border: str):
        return CpuDetector(model, spec, max_detections, value_range, border)

    def crops(self, model, value_range, border: str, keep_aspect: bool):
        return CpuCrops(model, value_range, border, keep_aspect)

    def readback(self):
        return None

    def gpu_stage(self, build):
        """No GPU-resident frames on the CPU: the solution takes its CPU path."""
        return None

    reads_host_frames = True  # a host frame saves reading the caller's texture back

    def describe(self) -> list[dict]:
        """Each model: its role and LiteRT's threads."""
        return [{"name": Path(m.graph.name).stem, "role": role, "backend": self.name,
                 "threads": m.num_threads} for role, m in self.models.items()]  # fmt: skip

    def close(self) -> None:
        self.frames.destroy()
