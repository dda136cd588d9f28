"""SelfieSegmenter: MediaPipe's selfie segmentation solution on the engine.

- input: frames (see base.py); selfie_segmentation (model_selection=0, 256x256) or
  selfie_segmentation_landscape (1, 144x256)
- output: `SegmentationResult`: the person probability at the frame's size (float32)
- semantics: MediaPipe's selfie_segmentation_cpu graph: the whole frame stretched onto the
  input (keep_aspect_ratio false, BORDER_ZERO, [0, 1]; engine/vision/image_to_tensor.py),
  the model's output already a probability (activation NONE), resized to the frame
  bilinearly as TensorsToSegmentationCalculator's cv::resize (no temporal smoothing)
- GPU: on webgpu the frame is one GPU frame (gpu_frames.SegmenterFrame): `gpu` is the
  model's output TensorLayout (PHWC4, one slice: vec4 y * W + x, lane 0; mask uv = frame
  uv), `output="gpu"` reads nothing back
- usage:
    with SelfieSegmenter() as seg:
        person = seg.process(rgb).mask > 0.5
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from engine.vision import records
from engine.vision.detect_track import CropModel
from engine.vision.gpu_frames import SegmenterFrame
from engine.vision.image_to_tensor import stretch_matrix
from engine.vision.roi import Rect
from engine.vision.solutions.base import Solution
from engine.vision.uploads import MaskBuffer

# model_selection -> the model; selfie_segmentation_cpu.pbtxt: [0, 1], BORDER_ZERO, the
# whole frame stretched (no letterbox)
MODELS = {
    0: CropModel("selfie_segmentation", (0.0, 1.0), "zero", keep_aspect=False),
    1: CropModel("selfie_segmentation_landscape", (0.0, 1.0), "zero", keep_aspect=False),
}
WHOLE_FRAME = Rect(0.5, 0.5, 1.0, 1.0, 0.0)  # its crop matrix is stretch_matrix's


@dataclass(frozen=True)
class SegmentationResult:
    mask: np.ndarray | None  # (H, W) float32 person probability at the frame's size
    image_size: tuple[int, int]
    timestamp_ms: int | None = None
    gpu: object = None  # SelfieSegmenter.gpu: the model-resolution mask on the GPU
    backend: str = "webgpu"  # which ran the models: "webgpu" or "xnnpack"

    @property
    def segmentation_mask(self) -> np.ndarray | None:
        """MediaPipe's name for `mask`."""
        return self.mask


FIELDS = {**records.FRAME, "mask": records.MASK}


def record(res: SegmentationResult) -> dict:
    return {"mask": records.mask(res.mask)}


def frame_mask(small: np.ndarray | None, frame_size, timestamp_ms, gpu=None):
    """The result of a model-resolution mask: resized to the frame bilinearly."""
    if small is None:
        return SegmentationResult(None, frame_size, timestamp_ms, gpu=gpu)
    mask = cv2.resize(small, frame_size, interpolation=cv2.INTER_LINEAR)
    return SegmentationResult(mask, frame_size, timestamp_ms, gpu=gpu)


class SelfieSegmenter(Solution):
    """MediaPipe's SelfieSegmentation on the engine; see the module docstring."""

    def __init__(self, model=None, *, model_selection: int = 0, **options):
        if model_selection not in MODELS:
            raise ValueError(f"model_selection must be 0 (general) or 1 (landscape), not "
                             f"{model_selection!r}")  # fmt: skip
        super().__init__(**options)
        declared = MODELS[model_selection]
        engine = self.engine = self.backend.model("segmentation", model, declared.model)
        g = engine.graph
        (out,) = [g.tensors[t].name for t in g.outputs]
        b, h, w, c = g.tensors[g.outputs[0]].shape
        if (b, c) != (1, 1):
            raise ValueError(
                f"output {g.tensors[g.outputs[0]].shape}: expected a mask [1, H, W, 1]"
            )
        self.output_name, self.mask_size = out, (w, h)
        self.crops = self.backend.crops(engine, declared.value_range, declared.border,
                                        declared.keep_aspect)  # fmt: skip
        self.program = self.backend.gpu_stage(lambda: SegmenterFrame(
            self.backend, engine, out, declared.value_range, declared.border, frame_mask,
            lambda: self.frame_size))  # fmt: skip
        self.uploads = None  # the CPU path with output="gpu": the mask uploaded
        if self.program is None and self.output == "gpu":
            self.uploads = MaskBuffer.create(self.device, h, w)

    @classmethod
    def models(cls, model_selection: int = 0, **_) -> tuple[str, ...]:
        """The manifest's models these options run."""
        return (MODELS[model_selection].model,)

    @property
    def gpu(self):
        """The model-resolution mask on the GPU (an engine TensorLayout, or its upload)."""
        return self.program.gpu if self.program is not None else self.uploads

    def _configure(self, frame_size) -> None:
        if self.program is not None:
            self.program.configure(stretch_matrix(frame_size))

    def track(self, frame, timestamp_ms) -> SegmentationResult:
        ((out, _),) = self.crops.run(frame, self.frame_size, [WHOLE_FRAME])
        w, h = self.mask_size
        small = np.asarray(out[self.output_name], np.float32).reshape(h, w)
        if self.uploads is not None:
            self.uploads.write(self.device, small)
        return frame_mask(small, self.frame_size, timestamp_ms, gpu=self.uploads)

    def _uploads(self) -> list:
        return [self.uploads] if self.uploads is not None else []
