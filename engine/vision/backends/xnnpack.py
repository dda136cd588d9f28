"""A model on LiteRT's XNNPACK (the CPU): numpy in, numpy out, the engine's graph beside it.

- input: a .tflite path or an imported Graph (engine.model.importer.load_tflite; a Graph
  whose `name` is an existing file runs that file, another is written back with
  engine.model.writer first); `num_threads` (None: every core, os.cpu_count())
- output: `run(tensor)` -> {output name: float32 array of the model's shape}, the names the
  engine gives (the file's tensor names), in the graph's output order
- semantics: LiteRT's Interpreter with its default delegate, XNNPACK, as MediaPipe's CPU
  graphs run the same files; `graph` is the engine's import of the file, so the solutions
  read output names and shapes from it as they do from an Engine
- usage:
    model = XnnpackModel(model_path("face_landmark"))
    outputs = model.run(np.zeros((1, 192, 192, 3), np.float32))
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np

from engine.errors import ModelError
from engine.native_log import captured_fd2, without_info
from engine.vision.backend import require_litert


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
            self._load(interpreter, source, threads)
        sys.stderr.write(without_info(log[0]))
        self.num_threads = threads
        (inp,) = self.interpreter.get_input_details()
        self.input_index, self.input_name = inp["index"], inp["name"]
        self.input_shape = tuple(int(d) for d in inp["shape"])
        by_name = {d["name"]: d["index"] for d in self.interpreter.get_output_details()}
        names = [self.graph.tensors[t].name for t in self.graph.outputs]
        self.outputs = [(name, by_name[name]) for name in names]
        self.runs = 0

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
        it = self.interpreter
        it.set_tensor(self.input_index, np.ascontiguousarray(tensor, np.float32))
        it.invoke()
        self.runs += 1
        return {name: it.get_tensor(index) for name, index in self.outputs}
