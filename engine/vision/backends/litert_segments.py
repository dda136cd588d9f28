"""A model holding ops LiteRT has no kernel for, run on LiteRT around them.

face_landmark_with_attention (FaceMesh refine_landmarks, Holistic refine_face_landmarks)
holds MediaPipe's landmark custom ops (engine/reference/landmark_ops.py NO_LITERT_KERNEL):
MediaPipe's CPU graph registers its own C++ kernels for them in its TFLite resolver; the
Python LiteRT interpreter cannot take kernels from Python. So the graph is cut at those
ops, as TFLite's delegates partition a graph:

- `split(graph)`: the ops in order, grouped into segments: a run of ops LiteRT runs
  becomes a model of its own (the engine's IR written back: engine/model/writer.py), each
  op it lacks stays an op (face_landmark_with_attention: LiteRT ops 0-90, the six sub-crop
  ops, ops 97-329 on the crops, the five landmark transforms, the rest);
- `SegmentedModel.run(tensor)`: the segments in order over a table of tensors: a LiteRT
  segment reads its inputs from it and writes the tensors later segments or the outputs
  read; an op LiteRT lacks runs its float64 kernel (the reference's, written from
  MediaPipe's CPU kernels), cast to float32 as MediaPipe's kernels compute, except the
  two that run three times a frame: `crop_bilinear` (TransformTensorBilinear in float32,
  as MediaPipe's: 0.11 ms a 16x16x32 crop against the reference's 0.46) and
  `crop_matrix` (Landmarks2TransformMatrix in closed form), checked against the reference
  (tests/vision/test_xnnpack_backend.py).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from engine.errors import ModelError
from engine.model.ir import Graph, Op, compact, tensors_read
from engine.reference.landmark_ops import NO_LITERT_KERNEL


@dataclass
class Segment:
    """Ops run together: on LiteRT (`graph` set) or one op in numpy (`op` set). `inputs`
    and `outputs`: the full graph's tensor ids it reads and writes for others."""

    inputs: list[int]
    outputs: list[int]
    graph: Graph | None = None
    op: Op | None = None


def needs_split(graph: Graph) -> bool:
    """Whether `graph` holds an op LiteRT has no kernel for."""
    return any(op.type in NO_LITERT_KERNEL for op in graph.ops)


def split(graph: Graph) -> list[Segment]:
    """The graph's ops as segments in order (see the module docstring)."""
    groups: list[list[Op]] = []
    for op in graph.ops:
        lacking = op.type in NO_LITERT_KERNEL
        if lacking or not groups or groups[-1][0].type in NO_LITERT_KERNEL:
            groups.append([op])
        else:
            groups[-1].append(op)
    # the tensors each group must hand on: read by a later group or a graph output
    read_after: list[set[int]] = [set(graph.outputs)]
    for ops in reversed(groups[1:]):
        read_after.append(read_after[-1] | {t for op in ops for t in tensors_read(op)})
    read_after.reverse()
    segments = []
    for ops, later in zip(groups, read_after, strict=True):
        written = [t for op in ops for t in op.outputs]
        made = set(written)
        inputs = sorted({t for op in ops for t in tensors_read(op)
                         if t not in made and graph.tensors[t].data is None})  # fmt: skip
        outputs = [t for t in written if t in later]
        if ops[0].type in NO_LITERT_KERNEL:
            segments.append(Segment(inputs, outputs, op=ops[0]))
        else:
            sub = Graph(graph.tensors, ops, inputs, outputs, name=graph.name)
            segments.append(Segment(inputs, outputs, graph=compact(sub)))
    return segments


def crop_bilinear(op: Op, inputs: list) -> list[np.ndarray]:
    """TransformTensorBilinear V2 in float32 (engine/reference/landmark_ops.py says what it
    computes): output pixel centres mapped by the matrix's first two rows; a point outside
    [0, W - 1] x [0, H - 1] reads 0; inside, its right and lower neighbours are clamped to
    the edge, where their weight is 0, so the blend needs no zero border."""
    data, matrix = inputs[0][0], np.asarray(inputs[1], np.float64).reshape(4, 4)
    out_h, out_w = op.attrs["output_height"], op.attrs["output_width"]
    h, w, c = data.shape
    ox, oy = np.arange(out_w) + 0.5, np.arange(out_h)[:, None] + 0.5
    tx = (matrix[0, 0] * ox + matrix[0, 1] * oy + matrix[0, 3] - 0.5).ravel()
    ty = (matrix[1, 0] * ox + matrix[1, 1] * oy + matrix[1, 3] - 0.5).ravel()
    inside = (tx >= 0) & (tx <= w - 1) & (ty >= 0) & (ty <= h - 1)  # NaN: outside
    tx[~inside], ty[~inside] = 0.0, 0.0
    x0, y0 = tx.astype(np.intp), ty.astype(np.intp)
    fx = (tx - x0).astype(np.float32)[:, None]
    fy = (ty - y0).astype(np.float32)[:, None]
    x1, y1 = np.minimum(x0 + 1, w - 1), np.minimum(y0 + 1, h - 1)
    flat = np.asarray(data, np.float32).reshape(-1, c)
    top = flat[y0 * w + x0] * (1 - fx) + flat[y0 * w + x1] * fx
    bottom = flat[y1 * w + x0] * (1 - fx) + flat[y1 * w + x1] * fx
    out = top * (1 - fy) + bottom * fy
    out[~inside] = 0.0
    return [out.reshape(1, out_h, out_w, c)]


def crop_matrix(op: Op, inputs: list) -> list[np.ndarray]:
    """Landmarks2TransformMatrix V2 as reference's transform_matrix, composed in closed form
    (Shift(centre) . Rot(-r) . Scale . Shift(-out / 2) is the linear part Rot(-r) . Scale
    and a shift): 0.03 ms against 0.13."""
    a = op.attrs
    lm = np.asarray(inputs[0], np.float64).reshape(-1, 3)[:, :2]
    left, right = lm[a["left_rotation_idx"]], lm[a["right_rotation_idx"]]
    r = a["target_rotation_radians"] - math.atan2(right[1] - left[1], right[0] - left[0])
    c, s = math.cos(r), math.sin(r)
    pts = lm[list(a["subset_idxs"])]  # the parser's repeat of an odd last index: no change
    x, y = pts[:, 0] * c - pts[:, 1] * s, pts[:, 0] * s + pts[:, 1] * c
    (x_lo, x_hi), (y_lo, y_hi) = (x.min(), x.max()), (y.min(), y.max())
    out_w, out_h = a["output_width"], a["output_height"]
    sx, sy = a["scale_x"] * (x_hi - x_lo) / out_w, a["scale_y"] * (y_hi - y_lo) / out_h
    cx, cy = (x_lo + x_hi) / 2, (y_lo + y_hi) / 2
    m = np.eye(4)
    m[:2, :2] = ((c * sx, s * sy), (-s * sx, c * sy))
    m[0, 3] = cx * c + cy * s - (c * sx * out_w + s * sy * out_h) / 2
    m[1, 3] = -cx * s + cy * c - (-s * sx * out_w + c * sy * out_h) / 2
    return [m.reshape(1, 4, 4).astype(np.float32)]


FAST_KERNELS = {"TransformTensorBilinear": crop_bilinear, "Landmarks2TransformMatrix": crop_matrix}


class SegmentedModel:
    """A graph run as LiteRT segments and numpy ops (see the module docstring): the same
    `run(tensor) -> {output name: array}` as one LiteRT interpreter."""

    def __init__(self, graph: Graph, interpreter, num_threads: int):
        from engine.model.writer import write_tflite
        from engine.reference.registry import kernel

        self.graph = graph
        self.segments = split(graph)
        self._steps = []
        for seg in self.segments:
            if seg.op is not None:
                self._steps.append((seg, FAST_KERNELS.get(seg.op.type) or kernel(seg.op.type)))
                continue
            try:
                it = interpreter(model_content=write_tflite(seg.graph), num_threads=num_threads)
                it.allocate_tensors()
            except (RuntimeError, ValueError) as exc:
                raise ModelError(f"{graph.name}: LiteRT cannot load a segment of the model "
                                 f"({exc})") from exc  # fmt: skip
            # a segment's graph keeps its inputs' and outputs' order: LiteRT's tensor index
            # of the i-th is seg.graph.inputs[i] / outputs[i]
            self._steps.append((seg, it))
        self.input_id = graph.inputs[0]
        self.input_shape = tuple(int(d) for d in graph.tensors[self.input_id].shape)
        self.outputs = [(graph.tensors[t].name, t) for t in graph.outputs]

    def run(self, tensor: np.ndarray) -> dict[str, np.ndarray]:
        values = {self.input_id: np.ascontiguousarray(tensor, np.float32)}
        for seg, step in self._steps:
            if seg.op is not None:
                args = [values[t] if t in values else self.graph.tensors[t].data
                        for t in seg.op.inputs]  # fmt: skip
                for t, out in zip(seg.op.outputs, step(seg.op, args), strict=True):
                    values[t] = out.astype(np.float32, copy=False)
                continue
            for t, index in zip(seg.inputs, seg.graph.inputs, strict=True):
                step.set_tensor(index, values[t])
            step.invoke()
            for t, index in zip(seg.outputs, seg.graph.outputs, strict=True):
                values[t] = step.get_tensor(index)
        return {name: values[t] for name, t in self.outputs}

    def describe(self) -> str:
        """The segments in a line: `litert 91 ops | Landmarks2TransformMatrix | ...`."""
        return " | ".join(f"litert {len(s.graph.ops)} ops" if s.op is None else s.op.type
                          for s in self.segments)  # fmt: skip
