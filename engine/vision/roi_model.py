"""A model run on several crops of one frame, in one submit (hands, faces, ...).

- input: a frame view (engine/vision/gpu_stage.FrameInput), its size, and the crops as
  MediaPipe NormalizedRects (engine/vision/roi.Rect)
- output: per crop, every model output as a float32 array of its model shape, and the
  crop's letterbox padding (left, top, right, bottom) for LandmarkLetterboxRemoval
- options: `value_range`, `border` ("zero" | "replicate") and `keep_aspect` (PadRoi), as
  the model's ImageToTensorCalculator sets them
- semantics: per crop, in one encoder: the pre-process (engine/vision/preprocess.py, a
  Preprocessor of its own: each crop has its own ROI uniform), the engine's dispatches,
  then copies of the outputs into one read-back buffer; one submit, one wait for all
- usage:
    crops = RoiModel(hand_engine, (0.0, 1.0), "replicate", keep_aspect=True)
    for outputs, padding in crops.run(view, (640, 480), rects): ...
"""

from __future__ import annotations

import numpy as np

from engine.precision import precision as precision_of
from engine.vision.gpu_stage import Readback
from engine.vision.image_to_tensor import letterbox_padding, pad_roi
from engine.vision.preprocess import Preprocessor
from engine.vision.roi import Rect, rect_matrix

NO_PADDING = (0.0, 0.0, 0.0, 0.0)


def unpack(layout, raw: bytes) -> np.ndarray:
    """A graph output's PHWC4 bytes (engine TensorLayout) -> float32 in its model shape."""
    b, h, w, c = layout.phwc4
    dtype = precision_of(layout.precision).dtype
    s = layout.slices
    stored = np.frombuffer(raw, dtype, s * b * h * w * 4).reshape(s, b * h, w, 4)
    hwc = stored.transpose(1, 2, 0, 3).reshape(b * h, w, s * 4)[:, :, :c]
    return hwc.astype(np.float32).reshape(layout.shape)


def crop_matrix(rect: Rect, frame_size, size: tuple[int, int],
                keep_aspect: bool) -> tuple[np.ndarray, tuple[float, ...]]:  # fmt: skip
    """A crop's frame_from_tensor and letterbox padding for a model input of `size` (w, h):
    the rect as it is, or grown to the input's aspect (PadRoi) when `keep_aspect`."""
    fw, fh = frame_size
    w, h = rect.width * fw, rect.height * fh
    if not keep_aspect:
        return rect_matrix(rect, frame_size), NO_PADDING
    pw, ph = pad_roi(w, h, size)
    padded = Rect(rect.x_center, rect.y_center, pw / fw, ph / fh, rect.rotation)
    return rect_matrix(padded, frame_size), letterbox_padding(w, h, size)


class RoiModel:
    """One engine, any number of crops per frame (see the module docstring)."""

    def __init__(self, engine, value_range: tuple[float, float], border: str,
                 keep_aspect: bool, sync: str = "sleep"):  # fmt: skip
        g = engine.graph
        self.engine = engine
        self.input_name = g.tensors[g.inputs[0]].name
        self.outputs = [engine.tensor_layout(g.tensors[t].name) for t in g.outputs]
        self.value_range, self.border, self.keep_aspect = value_range, border, keep_aspect
        self.slots: list[Preprocessor] = []
        self.readback = Readback(engine.ctx.device, sync)
        _, h, w, _ = engine.tensor_layout(self.input_name).phwc4
        self.size = (w, h)  # the model input's

    def crop(self, rect: Rect, frame_size) -> tuple[np.ndarray, tuple[float, ...]]:
        """The crop's frame_from_tensor and letterbox padding (ImageToTensorCalculator)."""
        return crop_matrix(rect, frame_size, self.size, self.keep_aspect)

    def run(self, view, frame_size, rects: list[Rect]) -> list[tuple[dict, tuple]]:
        """Every crop's outputs {name: array} and padding, in the order of `rects`."""
        if not rects:
            return []
        self._ensure_slots(len(rects))
        device = self.engine.ctx.device
        encoder = device.create_command_encoder()
        paddings = []
        for i, rect in enumerate(rects):
            m, padding = self.crop(rect, frame_size)
            paddings.append(padding)
            self.slots[i].set_roi(m)
            self.slots[i].encode(encoder, view)
            self.engine.encode(encoder)
            self.readback.encode(encoder, names=self._names(i))
        device.queue.submit([encoder.finish()])
        data = self.readback.read()
        return [
            ({o.name: unpack(o, data[f"{i}:{o.name}"]) for o in self.outputs}, paddings[i])
            for i in range(len(rects))
        ]

    def _names(self, slot: int) -> set[str]:
        return {f"{slot}:{o.name}" for o in self.outputs}

    def _ensure_slots(self, count: int) -> None:
        while len(self.slots) < count:
            i = len(self.slots)
            pre = Preprocessor(self.engine, self.input_name, self.value_range, border=self.border)
            self.slots.append(pre)
            for o in self.outputs:
                self.readback.add(f"{i}:{o.name}", o.buffer, o.offset, o.size)

    def owned_buffers(self) -> list:
        return [pre.roi for pre in self.slots]

    def destroy(self) -> None:
        self.readback.destroy()
