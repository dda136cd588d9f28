"""Temporal smoothing of landmarks and masks, as MediaPipe 0.10.14's calculators do it.

Written from mediapipe/util/filtering/{one_euro_filter,low_pass_filter}.cc,
calculators/util/landmarks_smoothing_calculator{,_utils}.cc,
visibility_smoothing_calculator.cc and calculators/image/segmentation_smoothing_calculator.cc:

- `LowPassFilter`: the first value passes, then alpha * v + (1 - alpha) * previous; its
  state is a float32, as the C++ `float`s (an alpha outside [0, 1] keeps the old one);
- `OneEuroFilter`: the 1-euro filter on timestamps in nanoseconds (the frequency from the
  last two; the first value passes), a value scale multiplying the derivative;
- `LandmarksSmoother`: a OneEuroFilter per landmark and axis, on pixels for normalised
  landmarks (x * W, y * H, z * W), the value scale 1 / object scale (the ROI's mean side in
  pixels) unless `disable_value_scaling`; `reset()` forgets every filter;
- `VisibilitySmoother`: a LowPassFilter per landmark on the visibility column;
- `smooth_mask`: SegmentationSmoothingCalculator's mix of the new and previous masks,
  weighted by the new mask's uncertainty.
- usage: `s = LandmarksSmoother(0.05, 80.0, 1.0); out = s(landmarks, t_ns, (W, H), scale)`
"""

from __future__ import annotations

import math

import numpy as np

INT64_MIN = -(2**63)


def _f32(x: float) -> float:
    return float(np.float32(x))


class LowPassFilter:
    """MediaPipe's LowPassFilter (float32 state)."""

    def __init__(self, alpha: float):
        self.alpha = _f32(alpha)
        self.initialized = False
        self.raw = 0.0
        self.stored = 0.0

    def apply(self, value: float, alpha: float | None = None) -> float:
        if alpha is not None and 0.0 <= _f32(alpha) <= 1.0:
            self.alpha = _f32(alpha)
        value = _f32(value)
        result = _f32(self.alpha * value + (1.0 - self.alpha) * self.stored) \
            if self.initialized else value  # fmt: skip
        self.initialized = True
        self.raw, self.stored = value, result
        return result


class OneEuroFilter:
    """MediaPipe's OneEuroFilter (one_euro_filter.cc), timestamps in nanoseconds."""

    def __init__(self, frequency: float, min_cutoff: float, beta: float, derivate_cutoff: float):
        self.frequency, self.min_cutoff = frequency, min_cutoff
        self.beta, self.derivate_cutoff = beta, derivate_cutoff
        self.x = LowPassFilter(self._alpha(min_cutoff))
        self.dx = LowPassFilter(self._alpha(derivate_cutoff))
        self.last_time = INT64_MIN

    def _alpha(self, cutoff: float) -> float:
        te = 1.0 / self.frequency
        tau = 1.0 / (2 * math.pi * cutoff)
        return 1.0 / (1.0 + tau / te)

    def apply(self, t_ns: int, value_scale: float, value: float) -> float:
        if self.last_time >= t_ns:
            return value  # "results are unpredictable": MediaPipe passes the value
        if self.last_time != 0 and t_ns != 0:
            # int64 arithmetic: the first call's t - INT64_MIN wraps (as in the C++); its
            # frequency is nonsense and unused (both filters are empty, the value passes)
            dt = (t_ns - self.last_time + 2**63) % 2**64 - 2**63
            self.frequency = 1.0 / (dt * 1e-9)
        self.last_time = t_ns
        dvalue = (value - self.x.raw) * value_scale * self.frequency if self.x.initialized \
            else 0.0  # fmt: skip
        edvalue = self.dx.apply(dvalue, self._alpha(self.derivate_cutoff))
        cutoff = self.min_cutoff + self.beta * abs(edvalue)
        return self.x.apply(value, self._alpha(cutoff))


class LandmarksSmoother:
    """LandmarksSmoothingCalculator with a one_euro_filter (see the module docstring)."""

    def __init__(self, min_cutoff: float, beta: float, derivate_cutoff: float, *,
                 frequency: float = 30.0, min_allowed_object_scale: float = 1e-6,
                 disable_value_scaling: bool = False):  # fmt: skip
        self.options = (frequency, min_cutoff, beta, derivate_cutoff)
        self.min_allowed_object_scale = min_allowed_object_scale
        self.disable_value_scaling = disable_value_scaling
        self.filters: list[list[OneEuroFilter]] = []

    def reset(self) -> None:
        self.filters = []

    def __call__(self, landmarks: np.ndarray, t_ns: int, image_size=None,
                 object_scale: float | None = None) -> np.ndarray:  # fmt: skip
        """Filtered copy of landmarks [N, >= 3]: normalised when `image_size` (W, H) is
        given (filtered in pixels), else as they are (world landmarks); columns past z
        are kept."""
        lm = np.array(landmarks, np.float64, copy=True)
        scale = np.array([image_size[0], image_size[1], image_size[0]], np.float64) \
            if image_size is not None else np.ones(3)  # fmt: skip
        if not self.filters:
            self.filters = [[OneEuroFilter(*self.options) for _ in range(3)] for _ in lm]
        value_scale = 1.0
        if not self.disable_value_scaling:
            if object_scale is None:
                raise ValueError("object_scale is needed unless disable_value_scaling")
            if object_scale < self.min_allowed_object_scale:
                return lm
            value_scale = _f32(1.0 / _f32(object_scale))
        px = lm[:, :3] * scale
        for i, axes in enumerate(self.filters):
            for a in range(3):
                px[i, a] = axes[a].apply(t_ns, value_scale, _f32(px[i, a]))
        lm[:, :3] = px / scale
        return lm


class VisibilitySmoother:
    """VisibilitySmoothingCalculator with a low_pass_filter: one LowPassFilter per landmark."""

    def __init__(self, alpha: float = 0.1):
        self.alpha = alpha
        self.filters: list[LowPassFilter] = []

    def __call__(self, visibility: np.ndarray) -> np.ndarray:
        if not self.filters:
            self.filters = [LowPassFilter(self.alpha) for _ in visibility]
        return np.array([f.apply(float(v)) for f, v in zip(self.filters, visibility, strict=True)])


# SegmentationSmoothingCalculator: uncertainty = 1 - min(1, x * poly(x)), x = (p - 0.5)^2,
# a polynomial fit of the binary entropy (its source gives the coefficients)
UNCERTAINTY_POLY = (5.68842, -0.748699, -57.8051, 291.309, -624.717)


def smooth_mask(new: np.ndarray, previous: np.ndarray | None, ratio: float) -> np.ndarray:
    """The new mask mixed with the previous one where the new one is uncertain."""
    if previous is None:
        return new
    new = np.asarray(new, np.float32)
    t = new - np.float32(0.5)
    x = t * t
    c1, c2, c3, c4, c5 = (np.float32(c) for c in UNCERTAINTY_POLY)
    poly = x * (c1 + x * (c2 + x * (c3 + x * (c4 + x * c5))))
    uncertainty = np.float32(1.0) - np.minimum(np.float32(1.0), poly)
    return new + (previous - new) * (uncertainty * np.float32(ratio))
