"""Image -> model input tensor, exactly as MediaPipe's ImageToTensorCalculator on the CPU.

One convention for every model input, here (the numpy oracle) and on the GPU
(engine/vision/preprocess.py, shaders/engine/preprocess.wgsl); written from MediaPipe's
image_to_tensor_utils.cc (GetRoi, PadRoi, GetRotatedSubRectToRectTransformMatrix,
GetValueRangeTransformation) and image_to_tensor_converter_opencv.cc, the converter the
Python solutions run:

1. ROI: a rotated rectangle in frame pixels (centre, size, rotation in radians, clockwise
   on screen); no ROI = the whole frame (centre (W/2, H/2), size (W, H)).
2. Letterbox (keep_aspect_ratio): PadRoi grows the ROI about its centre to the tensor's
   aspect ratio; the padding is not cut away afterwards, results map back through the
   same matrix (DetectionProjectionCalculator).
3. `frame_from_tensor`, a 2x3 affine, maps normalised tensor coordinates (u, v) in [0, 1]^2
   to frame pixels: the ROI's corners go to the tensor's corners (cv::boxPoints ->
   cv::getPerspectiveTransform onto (0, 0) .. (tensor W, tensor H)).
4. Sampling: tensor element (column i, row j) is the frame at frame_from_tensor(i / W,
   j / H) in pixel *index* coordinates (pixel k's centre is the coordinate k, OpenCV's
   warp convention): no half-pixel offsets on either side. Bilinear over the 4 neighbours,
   as cv::warpPerspective(INTER_LINEAR) of OpenCV 3.4 (the one in MediaPipe's wheel) on
   the 8-bit frame: the coordinate rounded to 1/32 px (INTER_BITS = 5), 15-bit integer
   weights, the result rounded to 8 bits before step 6.
5. Border: "zero" (a neighbour outside the frame counts as 0: BORDER_ZERO, face detection
   and selfie segmentation) or "replicate" (clamped to the edge: BORDER_REPLICATE, and
   MediaPipe's default, BORDER_UNSPECIFIED: face landmark).
6. Values: v / 255 * (hi - lo) + lo.

(The earlier convention sampled pixel centres, u = (i + 0.5) / W read at x + 0.5: half a
tensor pixel off MediaPipe's, which cost a median face-box IoU of 0.84 against it.)

- numpy: `image_to_tensor(image, frame_from_tensor, (w, h), value_range, border)`, the
  oracle; `warp_to_tensor` (same arguments) gives the same values 10-30x faster through
  OpenCV's fixed-point remap (the CPU backend's pre-process), into a caller's
  `WarpBuffers` (a crop whose matrix changes every frame, or a detector's that repeats)
- matrices: `subrect_matrix` (a rotated rect in pixels), `pad_roi`, `letterbox_matrix`,
  `stretch_matrix`
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

BORDERS = ("zero", "replicate")
COORD_STEPS = 32  # cv::warp* rounds source coordinates to 1/32 px (INTER_BITS = 5)


def subrect_matrix(cx: float, cy: float, width: float, height: float,
                   rotation: float = 0.0) -> np.ndarray:  # fmt: skip
    """2x3 frame_from_tensor of a rotated rect in frame pixels: normalised (u, v) -> the
    frame point centre + R(rotation) ((u - 0.5) width, (v - 0.5) height), R = [[c, -s],
    [s, c]] (GetRotatedSubRectToRectTransformMatrix without its post-scale to [0, 1])."""
    c, s = math.cos(rotation), math.sin(rotation)
    return np.array(
        [
            [width * c, -height * s, cx - 0.5 * width * c + 0.5 * height * s],
            [width * s, height * c, cy - 0.5 * width * s - 0.5 * height * c],
        ],
        np.float64,
    )


def pad_roi(width: float, height: float, size: tuple[int, int]) -> tuple[float, float]:
    """PadRoi: the ROI size grown to the tensor's aspect ratio (`size` = tensor (w, h))."""
    tw, th = size
    tensor_aspect, roi_aspect = th / tw, height / width
    if tensor_aspect > roi_aspect:
        return width, width * tensor_aspect
    return height / tensor_aspect, height


def letterbox_padding(width: float, height: float, size: tuple[int, int]) -> tuple[float, ...]:
    """PadRoi's LETTERBOX_PADDING (left, top, right, bottom), as fractions of the tensor, of
    a ROI of `width` x `height` pixels fitted into a tensor of `size` (w, h)."""
    tw, th = size
    tensor_aspect, roi_aspect = th / tw, height / width
    if tensor_aspect > roi_aspect:
        v = (1 - roi_aspect / tensor_aspect) / 2
        return (0.0, v, 0.0, v)
    h = (1 - tensor_aspect / roi_aspect) / 2
    return (h, 0.0, h, 0.0)


def letterbox_matrix(frame_size: tuple[int, int], size: tuple[int, int]) -> np.ndarray:
    """The whole frame, aspect kept (PadRoi), centred in a tensor of `size` (w, h)."""
    fw, fh = frame_size
    w, h = pad_roi(float(fw), float(fh), size)
    return subrect_matrix(fw / 2.0, fh / 2.0, w, h)


def stretch_matrix(frame_size: tuple[int, int]) -> np.ndarray:
    """The whole frame onto the whole tensor (keep_aspect_ratio false)."""
    fw, fh = frame_size
    return subrect_matrix(fw / 2.0, fh / 2.0, float(fw), float(fh))


def tensor_px_matrix(frame_from_tensor: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    """3x3: tensor element (i, j) -> frame pixel index coordinates (the inverse warp map)."""
    w, h = size
    m = np.asarray(frame_from_tensor, np.float64).reshape(2, 3)
    return np.array([[m[0, 0] / w, m[0, 1] / h, m[0, 2]],
                     [m[1, 0] / w, m[1, 1] / h, m[1, 2]], [0.0, 0.0, 1.0]])  # fmt: skip


def image_to_tensor(image: np.ndarray, frame_from_tensor: np.ndarray, size: tuple[int, int],
                    value_range: tuple[float, float] = (0.0, 1.0),
                    border: str = "replicate") -> np.ndarray:  # fmt: skip
    """[1, h, w, C] float32 model input from an 8-bit image (H, W, C) (module docstring).

    OpenCV 3.4's warpPerspective(INTER_LINEAR) on 8 bits, the one MediaPipe 0.10.14's
    wheel links (3.4.20), in integers: source coordinates rounded to 1/32 px, weights
    (32 - fy)(32 - fx) * 32 ... summing to 2^15, the sum rounded half up. Newer OpenCVs
    interpolate in float and differ by up to 3 levels on 5-10 % of the values."""
    if image.dtype != np.uint8 or image.ndim != 3:
        raise ValueError(f"expected an 8-bit image (H, W, C), got {image.dtype} {image.shape}")
    if border not in BORDERS:
        raise ValueError(f"border must be one of {BORDERS}, not {border!r}")
    w, h = size
    fh, fw = image.shape[:2]
    m = tensor_px_matrix(frame_from_tensor, size)
    j, i = np.meshgrid(np.arange(h, dtype=np.float64), np.arange(w, dtype=np.float64),
                       indexing="ij")  # fmt: skip
    x = np.rint((m[0, 0] * i + m[0, 1] * j + m[0, 2]) * COORD_STEPS).astype(np.int64)
    y = np.rint((m[1, 0] * i + m[1, 1] * j + m[1, 2]) * COORD_STEPS).astype(np.int64)
    x0, y0, fx, fy = x >> 5, y >> 5, x & 31, y & 31  # COORD_STEPS = 2^5
    src = image.astype(np.int64)

    def tap(ty, tx):
        inside = (tx >= 0) & (ty >= 0) & (tx < fw) & (ty < fh)
        px = src[np.clip(ty, 0, fh - 1), np.clip(tx, 0, fw - 1)]
        return px * inside[..., None] if border == "zero" else px

    total = (
        tap(y0, x0) * ((32 - fy) * (32 - fx) * 32)[..., None]
        + tap(y0, x0 + 1) * ((32 - fy) * fx * 32)[..., None]
        + tap(y0 + 1, x0) * (fy * (32 - fx) * 32)[..., None]
        + tap(y0 + 1, x0 + 1) * (fy * fx * 32)[..., None]
    )
    warped = (total + (1 << 14)) >> 15
    lo, hi = value_range
    scale = np.float32((hi - lo) / 255.0)
    return (warped.astype(np.float32) * scale + np.float32(lo)).reshape(1, h, w, -1)


def sample_maps(frame_from_tensor: np.ndarray, size: tuple[int, int]) -> tuple[np.ndarray, ...]:
    """OpenCV's fixed-point remap maps of the oracle's coordinates: (int16 (h, w, 2) pixel
    x0, y0; uint16 (h, w) 32 * fy + fx), the coordinates rounded to 1/32 px as above.
    Cached per matrix: a detector's letterbox and a segmenter's stretch repeat every frame
    (their maps cost about as much as the remap itself)."""
    key = tuple(np.asarray(frame_from_tensor, np.float64).ravel().tolist())
    return _sample_maps(key, (int(size[0]), int(size[1])))


@lru_cache(maxsize=16)
def _sample_maps(matrix: tuple[float, ...], size: tuple[int, int]) -> tuple[np.ndarray, ...]:
    w, h = size
    m = tensor_px_matrix(np.array(matrix).reshape(2, 3), size)
    i = np.arange(w, dtype=np.float64)
    j = np.arange(h, dtype=np.float64)[:, None]
    x = np.rint((m[0, 0] * i + (m[0, 1] * j + m[0, 2])) * COORD_STEPS).astype(np.int32)
    y = np.rint((m[1, 0] * i + (m[1, 1] * j + m[1, 2])) * COORD_STEPS).astype(np.int32)
    whole = np.empty((h, w, 2), np.int16)
    # far outside the frame either way (a border tap): int16 holds the clipped index
    np.clip(x >> 5, -32768, 32767, out=whole[..., 0], casting="unsafe")
    np.clip(y >> 5, -32768, 32767, out=whole[..., 1], casting="unsafe")
    fraction = ((y & 31) * COORD_STEPS + (x & 31)).astype(np.uint16)
    whole.flags.writeable = fraction.flags.writeable = False  # shared by the cache
    return whole, fraction


class WarpBuffers:
    """`warp_to_tensor`'s arrays for one caller, kept from call to call (a dict by tensor
    size and channels): a crop whose matrix changes every frame then allocates nothing the
    size of its tensor. The tensor returned is one of them: valid until the caller's next
    call with the same size. `repeating=True` (a detector's letterbox, the same matrix
    every frame): the maps come from `sample_maps`' cache, only the 8-bit warp and the
    tensor are kept here.

    Why: a 224x224 crop made 2.2 MB of temporaries (the maps' coordinates, the 8-bit warp,
    the float tensor), allocated and freed on the heap every frame, each block of 0.2-0.6
    MB: freed, such blocks stay resident in glibc's heap, which they fragment (hands: its
    free bytes grew 7 -> 12 MB over 15,000 frames with the bytes in use flat)."""

    def __init__(self, repeating: bool = False):
        self.repeating = repeating
        self._arrays: dict[tuple[int, int, int], dict[str, np.ndarray]] = {}

    def arrays(self, size: tuple[int, int], channels: int) -> dict[str, np.ndarray]:
        w, h = size
        key = (w, h, channels)
        if key not in self._arrays:
            arrays = {"warped": np.empty((h, w, channels), np.uint8),
                      "tensor": np.empty((1, h, w, channels), np.float32)}  # fmt: skip
            if not self.repeating:
                arrays.update({
                    "i": np.arange(w, dtype=np.float64),
                    "j": np.arange(h, dtype=np.float64)[:, None],
                    "coord": np.empty((h, w)), "x": np.empty((h, w), np.int32),
                    "y": np.empty((h, w), np.int32), "scratch": np.empty((h, w), np.int32),
                    "whole": np.empty((h, w, 2), np.int16),
                    "fraction": np.empty((h, w), np.uint16),
                })  # fmt: skip
            self._arrays[key] = arrays
        return self._arrays[key]


def _maps_into(frame_from_tensor: np.ndarray, size: tuple[int, int], b: dict) -> None:
    """`sample_maps`' values written into WarpBuffers' arrays (the same float64 arithmetic
    in the same order: equal bit for bit)."""
    m = tensor_px_matrix(frame_from_tensor, size)
    for row, whole_index, name in ((0, 0, "x"), (1, 1, "y")):
        np.add(m[row, 0] * b["i"], m[row, 1] * b["j"] + m[row, 2], out=b["coord"])
        np.multiply(b["coord"], COORD_STEPS, out=b["coord"])
        np.rint(b["coord"], out=b["coord"])
        np.copyto(b[name], b["coord"], casting="unsafe")
        np.right_shift(b[name], 5, out=b["scratch"])  # COORD_STEPS = 2^5
        np.clip(b["scratch"], -32768, 32767, out=b["scratch"])
        b["whole"][..., whole_index] = b["scratch"]
    np.bitwise_and(b["y"], 31, out=b["scratch"])
    np.multiply(b["scratch"], COORD_STEPS, out=b["scratch"])
    np.bitwise_and(b["x"], 31, out=b["x"])  # x is not needed after this
    np.add(b["scratch"], b["x"], out=b["scratch"])
    np.copyto(b["fraction"], b["scratch"], casting="unsafe")


def warp_to_tensor(image: np.ndarray, frame_from_tensor: np.ndarray, size: tuple[int, int],
                   value_range: tuple[float, float] = (0.0, 1.0), border: str = "replicate",
                   buffers: WarpBuffers | None = None) -> np.ndarray:  # fmt: skip
    """`image_to_tensor`'s values from cv2.remap on fixed-point maps (`sample_maps`): OpenCV
    interpolates those in integers, 15-bit weights summing to 2^15 and the sum rounded half
    up, as OpenCV 3.4's warp does (tests/vision/test_preprocess.py checks them equal).
    `buffers`: the warp and the tensor (and, unless it is `repeating`, the maps) written
    into a caller's WarpBuffers instead of new arrays; the tensor returned is one of them."""
    import cv2

    if image.dtype != np.uint8 or image.ndim != 3:
        raise ValueError(f"expected an 8-bit image (H, W, C), got {image.dtype} {image.shape}")
    if border not in BORDERS:
        raise ValueError(f"border must be one of {BORDERS}, not {border!r}")
    w, h = size
    mode = cv2.BORDER_CONSTANT if border == "zero" else cv2.BORDER_REPLICATE
    lo, hi = value_range
    scale = np.float32((hi - lo) / 255.0)
    if buffers is None:  # this call's own arrays, the maps from the cache
        buffers = WarpBuffers(repeating=True)
    b = buffers.arrays(size, image.shape[2])
    if buffers.repeating:
        whole, fraction = sample_maps(frame_from_tensor, size)
    else:
        _maps_into(frame_from_tensor, size, b)
        whole, fraction = b["whole"], b["fraction"]
    cv2.remap(image, whole, fraction, cv2.INTER_LINEAR, dst=b["warped"], borderMode=mode,
              borderValue=0)  # fmt: skip
    np.multiply(b["warped"], scale, out=b["tensor"][0], dtype=np.float32)
    np.add(b["tensor"], np.float32(lo), out=b["tensor"])
    return b["tensor"]
