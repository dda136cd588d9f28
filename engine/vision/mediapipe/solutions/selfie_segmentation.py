"""MediaPipe Selfie Segmentation (mp.solutions.selfie_segmentation) on
engine.vision.SelfieSegmenter.

- input: RGB uint8 images (H, W, 3)
- output: SolutionOutputs(segmentation_mask): the person probability (H, W) float32 at the
  image's size, read-only, as MediaPipe's
- options: model_selection 0 (general, 256x256) or 1 (landscape, 144x256); engine
  options: engine_options()
- usage:
    with mp.solutions.selfie_segmentation.SelfieSegmentation(model_selection=1) as seg:
        person = seg.process(rgb).segmentation_mask > 0.5
"""

from __future__ import annotations

import numpy as np

from engine.vision import SelfieSegmenter as _SelfieSegmenter
from engine.vision.mediapipe import solution_base as _base
from engine.vision.mediapipe.solution_base import SolutionBase

__all__ = ["SelfieSegmentation", "SolutionBase"]


class SelfieSegmentation(SolutionBase):
    """MediaPipe Selfie Segmentation: an RGB image -> the segmentation mask of people."""

    def __init__(self, model_selection=0):
        """model_selection: 0 (the general model) or 1 (the landscape model)."""
        self._start(_SelfieSegmenter(model_selection=model_selection, **_base.native_options()),
                    ("segmentation_mask",))  # fmt: skip

    def process(self, image: np.ndarray):
        """Processes an RGB image: SolutionOutputs with "segmentation_mask"."""
        return super().process(input_data={"image": image})

    def _outputs(self, result) -> tuple:
        return (_base.readonly(result.mask),)
