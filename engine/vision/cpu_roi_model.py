"""RoiModel's CPU twin: a model on XNNPACK run on several crops of one numpy frame.

- input: an RGB frame (H, W, 3) uint8 (engine/vision/cpu_frames.py), its size, and the
  crops as MediaPipe NormalizedRects (engine/vision/roi.Rect)
- output: per crop, every model output as a float32 array of its model shape, and the
  crop's letterbox padding (left, top, right, bottom), as RoiModel.run gives them
- options: `value_range`, `border` ("zero" | "replicate") and `keep_aspect`, as RoiModel's
- semantics: per crop: the crop matrix of RoiModel (roi_model.crop_matrix), the pre-process
  of engine/vision/image_to_tensor.warp_to_tensor (ImageToTensorCalculator's values exactly),
  the model on LiteRT's XNNPACK (engine/vision/xnnpack.py); nothing touches a GPU
- usage:
    crops = CpuRoiModel(XnnpackModel(path), (0.0, 1.0), "replicate", keep_aspect=True)
    for outputs, padding in crops.run(rgb, (640, 480), rects): ...
"""

from __future__ import annotations

import numpy as np

from engine.vision.image_to_tensor import warp_to_tensor
from engine.vision.roi import Rect
from engine.vision.roi_model import crop_matrix


class NoReadback:
    """What the solutions count of a stage's read-backs (`readback.maps`): none on the CPU."""

    maps = 0


class CpuRoiModel:
    """One XnnpackModel, any number of crops per frame (see the module docstring)."""

    readback = NoReadback()

    def __init__(self, model, value_range: tuple[float, float], border: str,
                 keep_aspect: bool):  # fmt: skip
        self.engine = model
        self.value_range, self.border, self.keep_aspect = value_range, border, keep_aspect
        self.size = model.input_size

    def crop(self, rect: Rect, frame_size) -> tuple[np.ndarray, tuple[float, ...]]:
        """The crop's frame_from_tensor and letterbox padding (ImageToTensorCalculator)."""
        return crop_matrix(rect, frame_size, self.size, self.keep_aspect)

    def run(self, image: np.ndarray, frame_size, rects: list[Rect]) -> list[tuple[dict, tuple]]:
        """Every crop's outputs {name: array} and padding, in the order of `rects`."""
        out = []
        for rect in rects:
            m, padding = self.crop(rect, frame_size)
            tensor = warp_to_tensor(image, m, self.size, self.value_range, self.border)
            out.append((self.engine.run(tensor), padding))
        return out

    def owned_buffers(self) -> list:
        return []

    def destroy(self) -> None:
        pass
