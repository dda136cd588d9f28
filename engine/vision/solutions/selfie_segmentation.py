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

from engine.vision.image_to_tensor import stretch_matrix, warp_to_tensor
from engine.vision.preprocess import Preprocessor
from engine.vision.solutions.base import Solution, Step
from engine.vision.solutions.cpu_upload import MaskBuffer
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
        g = engine.graph
        (out,) = [g.tensors[t].name for t in g.outputs]
        b, h, w, c = g.tensors[g.outputs[0]].shape
        if (b, c) != (1, 1):
            raise ValueError(
                f"output {g.tensors[g.outputs[0]].shape}: expected a mask [1, H, W, 1]"
            )
        self.output_name = out
        if self.backend == "xnnpack":  # output="gpu": the mask uploaded where draws read it
            self.mask = MaskBuffer.create(self.device, h, w) if self.output == "gpu" else None
            return
        self.pre = Preprocessor(engine, input_name(engine), VALUE_RANGE, border=BORDER)
        self.mask = engine.tensor_layout(out)
        lay = self.mask
        self.readback.add("mask", lay.buffer, lay.offset, lay.size)

    @property
    def gpu(self):
        """The model-resolution mask on the GPU (an engine TensorLayout)."""
        return self.mask

    def _configure(self, frame_size) -> None:
        if self.backend == "webgpu":
            self.pre.set_roi(stretch_matrix(frame_size))

    def steps(self, frame_view) -> list[Step]:
        if self.backend == "xnnpack":
            return self._cpu_steps(frame_view)
        return [
            ("preprocess", lambda enc: self.pre.encode(enc, frame_view)),
            ("inference", self.engine.encode),
        ]

    def model_mask(self, data: bytes) -> np.ndarray:
        """The read-back mask at the model's resolution (h, w) float32."""
        _, h, w, _ = self.mask.phwc4
        dtype = np.float16 if self.mask.precision == "fp16" else np.float32
        return np.frombuffer(data, dtype).reshape(h, w, 4)[:, :, 0].astype(np.float32)

    def _process_cpu(self, image, timestamp_ms) -> SegmentationResult:
        import cv2

        size = self.engine.input_size
        tensor = warp_to_tensor(image, stretch_matrix(self.frame_size), size, VALUE_RANGE, BORDER)
        small = self.engine.run(tensor)[self.output_name].reshape(size[1], size[0])
        if self.mask is not None:
            self.mask.write(self.device, small)
        mask = cv2.resize(small, self.frame_size, interpolation=cv2.INTER_LINEAR)
        return SegmentationResult(mask, self.frame_size, timestamp_ms, gpu=self.mask)

    def _result(self, data, timestamp_ms) -> SegmentationResult:
        import cv2

        small = self.model_mask(data["mask"])
        mask = cv2.resize(small, self.frame_size, interpolation=cv2.INTER_LINEAR)
        return SegmentationResult(mask, self.frame_size, timestamp_ms)

    def _gpu_result(self, timestamp_ms) -> SegmentationResult:
        return SegmentationResult(None, self.frame_size, timestamp_ms, gpu=self.gpu)

    def _uploaders(self) -> list:
        return [self.mask] if self.backend == "xnnpack" and self.mask is not None else []

    def _owned_buffers(self) -> list:
        if self.backend == "xnnpack":
            return [self.mask.buffer] if self.mask is not None else []
        return [self.pre.roi]
