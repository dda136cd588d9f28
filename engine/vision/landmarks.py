"""Landmark projection on the GPU: a landmark model's outputs -> points in frame coordinates.

- input: the landmark tensor ([1, 1, 1, N * dims], values in the crop's pixels; face mesh:
  `conv2d_21`, 468 x (x, y, z)) and the presence logit ([1, 1, 1, 1]; face mesh:
  `conv2d_31`) in their PHWC4 buffers, read in place; the ROI buffer of a DetectionRoi
  (frame_from_tensor of the crop the model saw, validity, frame size)
- output, on the GPU: `points`: N vec4 (x, y, z, 1) in frame pixels (z on the x scale),
  then from byte `norm_offset` N vec4 (x / frame w, y / frame h, z / frame w, 1);
  `args`: DrawIndirect (vertex_count, N if present else 0, 0, 0); `status`: f32
  (sigmoid(flag), present, roi valid, 0); present = sigmoid(flag) > 0.5 (and the ROI valid
  unless require_valid_roi=False)
- numpy oracle: `project_landmarks(raw, rect, frame_size, input_size)`, MediaPipe's
  TensorsToLandmarksCalculator (x / input width, y / input height, z / input width) then
  LandmarkProjectionCalculator (rotate about the crop centre, scale by the rect, shift)
- usage:
    lm = LandmarkProjector(landmark_engine, roi)   # roi: a DetectionRoi
    ...; landmark_engine.encode(enc); lm.encode(enc)
    render_pass.set_vertex_buffer(0, lm.points); render_pass.draw_indirect(lm.args, 0)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from engine.gpu import Binding, bind_group, compute_pipeline, dispatch, render_shader, zeros_buffer
from engine.vision.roi import Rect

# postprocess_landmarks.wgsl's group 0, its declarations generated from these: the model's
# landmarks and presence flag, the ROI record they were found in (roi_rect.wgsl's 96
# bytes, as a uniform), then the points, draw arguments and status written
BINDINGS = (
    Binding("in", name="landmarks", type="array<vec4<T>>"),
    Binding("in", name="flag", type="array<vec4<T>>"),
    Binding("const", space="uniform", name="roi", type="Roi"),
    Binding("out", name="points", type="array<vec4<f32>>"),
    Binding("out", name="args", type="array<u32>"),
    Binding("out", name="status", type="array<f32>"),
)


def project_landmarks(raw, rect: Rect, frame_size, input_size, dims: int = 3) -> np.ndarray:
    """[N, dims] landmarks in frame pixels (z scaled like x), float64, from the raw tensor."""
    fw, fh = (float(v) for v in frame_size)
    iw, ih = (float(v) for v in input_size)
    lm = np.asarray(raw, np.float64).reshape(-1, dims)
    x, y = lm[:, 0] / iw - 0.5, lm[:, 1] / ih - 0.5
    c, s = math.cos(rect.rotation), math.sin(rect.rotation)
    out = np.zeros_like(lm)
    out[:, 0] = ((c * x - s * y) * rect.width + rect.x_center) * fw
    out[:, 1] = ((s * x + c * y) * rect.height + rect.y_center) * fh
    if dims > 2:
        out[:, 2] = lm[:, 2] / iw * rect.width * fw
    return out


def crop_landmarks(raw, input_size, dims: int = 3, normalize_z: float = 1.0) -> np.ndarray:
    """TensorsToLandmarksCalculator: [N, dims] raw crop-pixel values -> x / input w,
    y / input h, z / input w / normalize_z (further values, visibility, as they are)."""
    iw, ih = (float(v) for v in input_size)
    lm = np.asarray(raw, np.float64).reshape(-1, dims).copy()
    lm[:, 0] /= iw
    lm[:, 1] /= ih
    if dims > 2:
        lm[:, 2] /= iw * normalize_z
    return lm


def refine_from_heatmap(lm: np.ndarray, heatmap, kernel_size: int = 7,
                        min_confidence: float = 0.5) -> np.ndarray:  # fmt: skip
    """RefineLandmarksFromHeatmapCalculator: each landmark's x, y (crop-normalised) moved
    to the sigmoid-weighted mean cell of its heatmap channel around it (`kernel_size`
    cells, cut at the edges) when the window's best confidence >= `min_confidence`.
    Cells are integer indices (no +0.5) and the centre cell truncates toward zero, as
    the C++ does."""
    hm = np.asarray(heatmap, np.float32)
    hm_h, hm_w, channels = hm.shape[-3:]
    hm = hm.reshape(hm_h, hm_w, channels)
    if channels != len(lm):
        raise ValueError(f"heatmap has {channels} channels for {len(lm)} landmarks")
    out = np.array(lm, np.float64, copy=True)
    half = (kernel_size - 1) // 2
    for i in range(len(out)):
        col, row = int(np.float32(out[i, 0]) * hm_w), int(np.float32(out[i, 1]) * hm_h)
        if not (0 <= col < hm_w and 0 <= row < hm_h):
            continue
        rows = slice(max(0, row - half), min(hm_h, row + half + 1))
        cols = slice(max(0, col - half), min(hm_w, col + half + 1))
        conf = 1.0 / (1.0 + np.exp(-hm[rows, cols, i].astype(np.float64)))
        total = conf.sum()
        if conf.max() >= min_confidence and total > 0:
            r, c = np.mgrid[rows, cols]
            out[i, 0] = (c * conf).sum() / hm_w / total
            out[i, 1] = (r * conf).sum() / hm_h / total
    return out


def remove_letterbox(lm: np.ndarray, padding) -> np.ndarray:
    """LandmarkLetterboxRemovalCalculator: undo the (left, top, right, bottom) padding."""
    left, top, right, bottom = padding
    out = np.array(lm, np.float64, copy=True)
    out[:, 0] = (out[:, 0] - left) / (1 - left - right)
    out[:, 1] = (out[:, 1] - top) / (1 - top - bottom)
    if out.shape[1] > 2:
        out[:, 2] /= 1 - left - right
    return out


def project_to_frame(lm: np.ndarray, rect: Rect) -> np.ndarray:
    """LandmarkProjectionCalculator: crop-normalised [N, >= 2] -> frame-normalised (the
    rotation applied in normalised crop space, z scaled by the rect's width)."""
    c, s = math.cos(rect.rotation), math.sin(rect.rotation)
    x, y = lm[:, 0] - 0.5, lm[:, 1] - 0.5
    out = np.array(lm, np.float64, copy=True)
    out[:, 0] = (c * x - s * y) * rect.width + rect.x_center
    out[:, 1] = (s * x + c * y) * rect.height + rect.y_center
    if out.shape[1] > 2:
        out[:, 2] = lm[:, 2] * rect.width
    return out


def project_world(world, rect: Rect) -> np.ndarray:
    """WorldLandmarkProjectionCalculator: [N, 3] metres rotated by the rect's rotation
    (no translation, no scale; z as it is)."""
    w = np.asarray(world, np.float64).reshape(-1, 3)
    c, s = math.cos(rect.rotation), math.sin(rect.rotation)
    out = w.copy()
    out[:, 0] = c * w[:, 0] - s * w[:, 1]
    out[:, 1] = s * w[:, 0] + c * w[:, 1]
    return out


@dataclass(frozen=True)
class GpuLandmarks:
    """LandmarkProjector's buffers read back (tests and debugging)."""

    points: np.ndarray  # [N, 4] frame pixels
    normalised: np.ndarray  # [N, 4] frame-normalised
    presence: float
    present: bool
    roi_valid: bool
    args: np.ndarray  # DrawIndirect (vertex_count, instance_count, 0, 0)


def landmark_outputs(g) -> tuple[str, str]:
    """(landmarks, flag) among a graph's outputs: the largest and a 1-element one."""
    outs = [(g.tensors[t].name, int(np.prod(g.tensors[t].shape))) for t in g.outputs]
    flags = [n for n, size in outs if size == 1]
    if not flags:
        raise ValueError(f"no 1-element presence output among {outs}; pass names=")
    return max(outs, key=lambda o: o[1])[0], flags[0]


class LandmarkProjector:
    """Landmark tensor + presence flag -> frame-space point vertex buffer + draw args.

    `roi`: a DetectionRoi (or anything with a `buffer` in its 96-byte layout, see
    shaders/engine/roi_rect.wgsl). `names`: (landmarks, flag) outputs of `engine`, default
    the largest output and the 1-element one. `vertex_count`: vertices per point instance
    (6: a quad; 1: a point-list primitive).
    """

    def __init__(
        self,
        engine,
        roi,
        *,
        names: tuple[str, str] | None = None,
        dims: int = 3,
        threshold: float = 0.5,
        vertex_count: int = 6,
        require_valid_roi: bool = True,
        input_name: str | None = None,
    ):
        import wgpu

        lm_name, flag_name = names or landmark_outputs(engine.graph)
        lm, flag = engine.tensor_layout(lm_name), engine.tensor_layout(flag_name)
        b, h, w, c = lm.phwc4
        if b * h * w != 1 or c % dims:
            raise ValueError(f"landmarks {lm.shape}: expected [1, 1, 1, N * {dims}]")
        if int(np.prod(flag.shape)) != 1:
            raise ValueError(f"presence flag {flag.shape}: expected one value")
        g = engine.graph
        inputs = [g.tensors[t].name for t in g.inputs]
        inp = engine.tensor_layout(input_name or inputs[0])
        _, in_h, in_w, _ = inp.phwc4
        self.ctx, self.roi, self.num_points = engine.ctx, roi, c // dims
        n = self.num_points
        self.norm_offset = -(-n * 16 // 256) * 256  # bytes; storage-offset aligned
        source = render_shader(
            "postprocess_landmarks.wgsl",
            BINDINGS,
            precision=lm.precision,
            n=n,
            dims=dims,
            in_w=f"{float(in_w)!r}",
            in_h=f"{float(in_h)!r}",
            norm_offset=self.norm_offset // 16,
            vertex_count=int(vertex_count),
            threshold=f"{float(threshold)!r}",
            require_valid_roi="true" if require_valid_roi else "false",
        )
        dev = self.ctx.device
        self.pipeline = compute_pipeline(self.ctx, source, "postprocess_landmarks")
        usage = wgpu.BufferUsage
        self.points = zeros_buffer(
            dev, self.norm_offset + n * 16, usage.STORAGE | usage.VERTEX | usage.COPY_SRC
        )
        self.args = zeros_buffer(dev, 16, usage.STORAGE | usage.INDIRECT | usage.COPY_SRC)
        self.status = zeros_buffer(dev, 16, usage.STORAGE | usage.COPY_SRC)
        resources = {
            "landmarks": (lm.buffer, lm.offset, lm.size),
            "flag": (flag.buffer, flag.offset, flag.size),
            "roi": (roi.buffer, 0, 96),
            "points": self.points,
            "args": self.args,
            "status": self.status,
        }
        self.group = bind_group(dev, self.pipeline, BINDINGS, resources)
        self.grid = (-(-n // 64), 1, 1)

    def encode(self, encoder) -> None:
        """Record the projection (one compute pass) into `encoder`."""
        dispatch(encoder, self.pipeline, self.group, self.grid)

    def read(self) -> GpuLandmarks:
        """Read the results back (blocks; tests and debugging)."""
        q = self.ctx.device.queue
        pts = np.frombuffer(q.read_buffer(self.points), np.float32)
        n, off = self.num_points, self.norm_offset // 4
        st = np.frombuffer(q.read_buffer(self.status), np.float32)
        return GpuLandmarks(
            points=pts[: n * 4].reshape(n, 4).copy(),
            normalised=pts[off : off + n * 4].reshape(n, 4).copy(),
            presence=float(st[0]),
            present=bool(st[1] > 0.5),
            roi_valid=bool(st[2] > 0.5),
            args=np.frombuffer(q.read_buffer(self.args), np.uint32).copy(),
        )
