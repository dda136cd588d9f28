"""MediaPipe's landmark custom ops (face_landmark_with_attention's sub-crops), version 2.

Written from their CPU kernels' definitions (mediapipe/util/tflite/operations/
landmarks_to_transform_matrix.cc, transform_tensor_bilinear.cc, transform_landmarks.cc at
v0.10.14, namespace v2; options as TFLite's GPU parsers read them), in float64 whatever
the interpreter's dtype (results cast back to it): the oracle of the GPU kernels, since
LiteRT has no kernel for them.

- Landmarks2TransformMatrix: landmarks [1, N, 3] -> the 4x4 matrix (row-major, [1, 4, 4])
  that maps a (output_width x output_height) sub-crop's pixels into the landmarks' space:
  rotation = target_rotation_radians - atan2(R.y - L.y, R.x - L.x) (L, R: the landmarks
  left_rotation_idx, right_rotation_idx); the subset's points rotated by it; their box
  (min, max per axis, from the first point on) gives the size (w, h) and the centre,
  rotated back; matrix = Shift(centre) . Rot(-rotation) . Scale(scale_x * w / out_w,
  scale_y * h / out_h) . Shift(-out_w / 2, -out_h / 2)
- TransformTensorBilinear: data [1, H, W, C] and the matrix -> [1, out_h, out_w, C]: rows
  0 and 1 of the matrix, corrected to pixel centres (t[3] += 0.5 t[0] + 0.5 t[1] - 0.5),
  map output pixel (x, y) to (tx, ty); outside [0, W - 1] x [0, H - 1] the output is 0,
  else the bilinear blend of the four neighbours, a neighbour outside the data reading 0
- TransformLandmarks: landmarks [1, N, 2 or 3] and the matrix: (x, y) -> (m0 x + m1 y + m3,
  m4 x + m5 y + m7), z as it is
"""

from __future__ import annotations

import math

import numpy as np

from engine.model.ir import Op
from engine.reference.registry import register

# LiteRT runs none of them (no builtin kernel, none in its XNNPACK delegate: "unresolved
# custom op"): a model holding one is checked against these kernels in float64 instead.
NO_LITERT_KERNEL = frozenset({"Landmarks2TransformMatrix", "TransformTensorBilinear",
                              "TransformLandmarks"})  # fmt: skip


def _rotation(r: float) -> np.ndarray:
    c, s = math.cos(r), math.sin(r)
    return np.array([[c, -s], [s, c]])


def _affine4(linear: np.ndarray, shift=(0.0, 0.0)) -> np.ndarray:
    """The 4x4 matrix of a 2-D linear map and shift (z and w kept)."""
    m = np.eye(4)
    m[:2, :2] = linear
    m[:2, 3] = shift
    return m


def transform_matrix(landmarks: np.ndarray, attrs: dict) -> np.ndarray:
    """Landmarks2TransformMatrix V2 on [N, >= 2] landmarks: the 4x4 matrix, float64."""
    lm = np.asarray(landmarks, np.float64)[:, :2]
    left, right = lm[attrs["left_rotation_idx"]], lm[attrs["right_rotation_idx"]]
    rotation = attrs["target_rotation_radians"] - math.atan2(right[1] - left[1],
                                                             right[0] - left[0])  # fmt: skip
    subset = list(attrs["subset_idxs"])
    if len(subset) % 2:  # the parser pairs the list up, an odd last index with itself
        subset.append(subset[-1])
    rotated = lm[subset] @ _rotation(rotation).T
    lo, hi = rotated.min(axis=0), rotated.max(axis=0)
    width, height = hi - lo
    centre = _rotation(-rotation) @ ((lo + hi) / 2)
    out_w, out_h = attrs["output_width"], attrs["output_height"]
    scale = np.diag([attrs["scale_x"] * width / out_w, attrs["scale_y"] * height / out_h])
    return (
        _affine4(np.eye(2), centre)
        @ _affine4(_rotation(-rotation))
        @ _affine4(scale)
        @ _affine4(np.eye(2), (-out_w / 2.0, -out_h / 2.0))
    )


def sample_bilinear(data: np.ndarray, matrix: np.ndarray, out_h: int, out_w: int) -> np.ndarray:
    """TransformTensorBilinear V2: data [H, W, C], matrix 16 values -> [out_h, out_w, C]."""
    data = np.asarray(data, np.float64)
    h, w, _ = data.shape
    m = np.asarray(matrix, np.float64).reshape(4, 4)
    xt, yt = m[0].copy(), m[1].copy()
    # Pixel centres: T -> S . T . A with A a +0.5 shift and S a -0.5 one (z is 0, so
    # column 2 drops out)
    xt[3] += 0.5 * xt[0] + 0.5 * xt[1] - 0.5
    yt[3] += 0.5 * yt[0] + 0.5 * yt[1] - 0.5
    oy, ox = np.mgrid[0:out_h, 0:out_w].astype(np.float64)
    tx = xt[0] * ox + xt[1] * oy + xt[3]
    ty = yt[0] * ox + yt[1] * oy + yt[3]
    # Non-finite coordinates (a degenerate matrix) count as outside, where the C++ is
    # undefined.
    inside = (tx >= 0) & (tx <= w - 1) & (ty >= 0) & (ty <= h - 1)
    x0 = np.floor(np.where(inside, tx, 0.0)).astype(np.int64)
    y0 = np.floor(np.where(inside, ty, 0.0)).astype(np.int64)

    def read(rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
        ok = (rows >= 0) & (rows < h) & (cols >= 0) & (cols < w)
        values = data[np.clip(rows, 0, h - 1), np.clip(cols, 0, w - 1)]
        return np.where(ok[..., None], values, 0.0)

    right = np.where(inside, tx - x0, 0.0)[..., None]
    lower = np.where(inside, ty - y0, 0.0)[..., None]
    upper_row = (1.0 - right) * read(y0, x0) + right * read(y0, x0 + 1)
    lower_row = (1.0 - right) * read(y0 + 1, x0) + right * read(y0 + 1, x0 + 1)
    out = lower * lower_row + (1.0 - lower) * upper_row
    return np.where(inside[..., None], out, 0.0)


def transform_points(landmarks: np.ndarray, matrix: np.ndarray) -> np.ndarray:
    """TransformLandmarks V2: [N, 2 or 3] landmarks -> the same, x and y mapped, z kept."""
    lm = np.asarray(landmarks, np.float64)
    m = np.asarray(matrix, np.float64).reshape(4, 4)
    out = lm.copy()
    out[:, 0] = m[0, 0] * lm[:, 0] + m[0, 1] * lm[:, 1] + m[0, 3]
    out[:, 1] = m[1, 0] * lm[:, 0] + m[1, 1] * lm[:, 1] + m[1, 3]
    return out


@register("Landmarks2TransformMatrix")
def landmarks_to_transform_matrix(op: Op, inputs: list) -> list[np.ndarray]:
    x = inputs[0]
    return [transform_matrix(x.reshape(-1, 3), op.attrs).reshape(1, 4, 4).astype(x.dtype)]


@register("TransformTensorBilinear")
def transform_tensor_bilinear(op: Op, inputs: list) -> list[np.ndarray]:
    x, m = inputs[0], inputs[1]
    out = sample_bilinear(x[0], m, op.attrs["output_height"], op.attrs["output_width"])
    return [out[None].astype(x.dtype)]


@register("TransformLandmarks")
def transform_landmarks(op: Op, inputs: list) -> list[np.ndarray]:
    x, m = inputs[0], inputs[1]
    return [transform_points(x[0], m)[None].astype(x.dtype)]
