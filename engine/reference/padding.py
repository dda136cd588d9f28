"""TFLite's output-size and padding rules for windowed ops (conv, pool, transpose conv).

From tensorflow/lite/kernels/padding.h:
- SAME:  out = ceil(in / stride);  VALID: out = ceil((in - eff_k + 1) / stride),
  with eff_k = (k - 1) * dilation + 1;
- pad_total = max(0, (out - 1) * stride + eff_k - in), split floor half before,
  the rest (one more when odd) after.
"""

from __future__ import annotations

import numpy as np

from engine.errors import ModelError
from engine.model.op_specs import window_out


def out_size(padding: str, size: int, k: int, stride: int, dilation: int = 1) -> int:
    """Output length along one spatial axis (the op table's window_out)."""
    if padding not in ("SAME", "VALID"):
        raise ModelError(f"unsupported padding {padding!r} (expected SAME or VALID)")
    return window_out(padding, size, k, stride, dilation)


def pad_before(padding: str, size: int, k: int, stride: int, dilation: int = 1) -> int:
    """Zero padding before the first element: floor(pad_total / 2)."""
    out = out_size(padding, size, k, stride, dilation)
    eff_k = (k - 1) * dilation + 1
    return max(0, (out - 1) * stride + eff_k - size) // 2


def windows(
    x: np.ndarray,
    padding: str,
    k: tuple[int, int],
    stride: tuple[int, int],
    dilation: tuple[int, int] = (1, 1),
    fill: float = 0.0,
) -> np.ndarray:
    """Sliding windows of NHWC `x` as [N, OH, OW, kH, kW, C]; taps outside the input read `fill`."""
    (kh, kw), (sh, sw), (dh, dw) = k, stride, dilation
    n, h, w, c = x.shape
    oh, ow = out_size(padding, h, kh, sh, dh), out_size(padding, w, kw, sw, dw)
    if oh <= 0 or ow <= 0:
        raise ModelError(f"window {kh}x{kw} (dilation {dh}x{dw}) does not fit input {h}x{w}")
    ph, pw = pad_before(padding, h, kh, sh, dh), pad_before(padding, w, kw, sw, dw)
    # Pad just enough that every window lies inside the padded array.
    need_h, need_w = (oh - 1) * sh + (kh - 1) * dh + 1, (ow - 1) * sw + (kw - 1) * dw + 1
    pads = ((0, 0), (ph, max(0, need_h - ph - h)), (pw, max(0, need_w - pw - w)), (0, 0))
    xp = np.pad(x, pads, constant_values=fill)
    rows = []
    for fy in range(kh):
        y0 = fy * dh
        taps = [
            xp[:, y0 : y0 + (oh - 1) * sh + 1 : sh, fx * dw : fx * dw + (ow - 1) * sw + 1 : sw]
            for fx in range(kw)
        ]
        rows.append(np.stack(taps, axis=3))
    return np.stack(rows, axis=3)
