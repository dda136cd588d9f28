"""SelfieSegmenter: MediaPipe's selfie segmentation solution on the engine.

- input: frames (see base.py); selfie_segmentation (model_selection=0, 256x256) or
  selfie_segmentation_landscape (1, 144x256)
- output: `SegmentationResult`: the person probability at the frame's size (float32)
- semantics: MediaPipe's selfie_segmentation_cpu graph: the whole frame stretched onto the
  input (keep_aspect_ratio false, BORDER_ZERO, [0, 1]; engine/vision/image_to_tensor.py),
  the model's output already a probability (activation NONE), resized to the frame
  bilinearly as TensorsToSegmentationCalculator's cv::resize (no temporal smoothing)
- GPU: `gpu` is the model's output TensorLayout (PHWC4, one slice: vec4 y * W + x, lane 0;
  mask uv = frame uv): `output="gpu"` reads nothing back
- usage:
    with SelfieSegmenter() as seg:
        person = seg.process(rgb).mask > 0.5
"""

from __future__ import annotations

import numpy as np

from engine.vision.image_to_tensor import stretch_matrix
from engine.vision.preprocess import Preprocessor
from engine.vision.solutions.base import Solution, Step
from engine.vision.solutions.face_detector import input_name
from engine.vision.solutions.results import SegmentationResult

MODELS = {0: "selfie_segmentation", 1: "selfie_segmentation_landscape"}
VALUE_RANGE = (0.0, 1.0)  # selfie_segmentation_cpu: output_tensor_float_range
BORDER = "zero"  # selfie_segmentation_cpu: BORDER_ZERO


class SelfieSegmenter(Solution):
    """MediaPipe's SelfieSegmentation on the engine; see the module docstring."""

    def __init__(self, model=None, *, model_selection: int = 0, **options):
        if model_selection not in MODELS:
            raise ValueError(f"model_selection must be one of {list(MODELS)}")
        super().__init__(**options)
        engine = self.engine = self._engine("segmentation", model, MODELS[model_selection])
        self.pre = Preprocessor(engine, input_name(engine), VALUE_RANGE, border=BORDER)
        g = engine.graph
        (out,) = [g.tensors[t].name for t in g.outputs]
        self.mask = engine.tensor_layout(out)
        b, h, w, c = self.mask.phwc4
        if (b, c) != (1, 1):
            raise ValueError(f"output {self.mask.shape}: expected a mask [1, H, W, 1]")
        lay = self.mask
        self.readback.add("mask", lay.buffer, lay.offset, lay.size)

    @property
    def gpu(self):
        """The model-resolution mask on the GPU (an engine TensorLayout)."""
        return self.mask

    def _configure(self, frame_size) -> None:
        self.pre.set_roi(stretch_matrix(frame_size))

    def steps(self, frame_view) -> list[Step]:
        return [
            ("preprocess", lambda enc: self.pre.encode(enc, frame_view)),
            ("inference", self.engine.encode),
        ]

    def model_mask(self, data: bytes) -> np.ndarray:
        """The read-back mask at the model's resolution (h, w) float32."""
        _, h, w, _ = self.mask.phwc4
        dtype = np.float16 if self.mask.precision == "fp16" else np.float32
        return np.frombuffer(data, dtype).reshape(h, w, 4)[:, :, 0].astype(np.float32)

    def _result(self, data, timestamp_ms) -> SegmentationResult:
        import cv2

        small = self.model_mask(data["mask"])
        mask = cv2.resize(small, self.frame_size, interpolation=cv2.INTER_LINEAR)
        return SegmentationResult(mask, self.frame_size, timestamp_ms)

    def _gpu_result(self, timestamp_ms) -> SegmentationResult:
        return SegmentationResult(None, self.frame_size, timestamp_ms, gpu=self.gpu)

    def _owned_buffers(self) -> list:
        return [self.pre.roi]
