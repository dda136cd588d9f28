"""SSD detector post-process on the GPU: anchor decode, sigmoid score, threshold, weighted NMS.

- input: the detector's PHWC4 output buffers, read in place (an Engine's `regressors`
  [1, N, 4 + 2K] and `classificators` [1, N, 1], or TensorLayouts of buffers you filled);
  the 2x3 `frame_from_tensor` affine (normalised tensor coords -> frame pixels, e.g.
  engine.vision.ssd.letterbox_matrix) and the frame size, a 48-byte uniform update
- output, all on the GPU (nothing is read back):
  `detections`: MAX records of `DetectionRecord.stride` f32 words, highest score first;
  `status`: u32 (count, candidates >= min score, candidates left out by the max count,
  candidates dropped by the compaction cap);
  `args`: DrawIndirect (vertex_count, instance_count = count, 0, 0) for `draw_indirect`
- semantics: exactly engine.vision.ssd.detect_faces (decode_boxes, scores_from_logits,
  threshold >= min_score, weighted_nms, project), first `max_detections` detections
- usage:
    dec = SsdDecoder(engine)                       # BlazeFace short range defaults
    dec.set_frame_transform(letterbox_matrix((w, h)), (w, h))
    pre.encode(enc, view); engine.encode(enc); dec.encode(enc)
    render_pass.draw_indirect(dec.args, 0)         # instance i reads record i

One work group of 256 invocations (see shaders/engine/postprocess_ssd.wgsl): threshold with an
atomic compaction, a bitonic sort in workgroup memory, then the NMS loop. Anchors are
computed once on the CPU (engine/vision/ssd_spec.ssd_anchors) and uploaded as a constant buffer.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.gpu import (
    Binding,
    bind_group,
    compute_pipeline,
    dispatch,
    render_shader,
    wgsl_float,
    zeros_buffer,
)
from engine.vision.ssd_spec import BLAZEFACE_SHORT, ssd_anchors

WORKGROUP = 256
MAX_CANDIDATES = 1024  # compaction cap (workgroup memory: 12 bytes per candidate)
# postprocess_ssd.wgsl's group 0, its declarations generated from these
BINDINGS = (
    Binding("in", name="regressors", type="array<vec4<T>>"),
    Binding("in", name="classificators", type="array<vec4<T>>"),
    Binding("in", name="anchors", type="array<vec4<f32>>"),
    Binding("const", space="uniform", name="params", type="Params"),
    Binding("out", name="detections", type="array<f32>"),
    Binding("out", name="status", type="array<u32>"),
    Binding("out", name="args", type="array<u32>"),
)


@dataclass(frozen=True)
class DetectionRecord:
    """Word offsets (f32) inside one detection record of `SsdDecoder.detections`.

    header: score, group size (boxes averaged), anchor index of the best box, 0;
    then three sections of `section` words, each xmin, ymin, xmax, ymax, keypoint 0 x, y,
    ..., keypoint K-1 x, y, zero padding: `tensor` (normalised to the model input),
    `frame_px` (frame pixels) and `frame_norm` (frame pixels / frame size).
    """

    num_keypoints: int

    @property
    def coords(self) -> int:
        return 4 + 2 * self.num_keypoints

    @property
    def section(self) -> int:
        return -(-self.coords // 4) * 4

    header = 0
    tensor = 4

    @property
    def frame_px(self) -> int:
        return 4 + self.section

    @property
    def frame_norm(self) -> int:
        return 4 + 2 * self.section

    @property
    def stride(self) -> int:
        return 4 + 3 * self.section

    @property
    def stride_bytes(self) -> int:
        return 4 * self.stride


@dataclass(frozen=True)
class GpuDetections:
    """Detections read back from the GPU (tests and debugging only)."""

    boxes: np.ndarray  # [n, 4] xmin, ymin, xmax, ymax
    keypoints: np.ndarray  # [n, K, 2]
    scores: np.ndarray  # [n]
    group_sizes: np.ndarray  # [n] boxes averaged into each detection
    anchor_index: np.ndarray  # [n] anchor of the best box of each group
    candidates: int  # anchors with score >= min score
    left_out: int  # candidates not consumed when max_detections was reached

    def __len__(self) -> int:
        return int(self.scores.shape[0])


class SsdDecoder:
    """Decode + weighted NMS of one SSD detector's outputs, recorded into a caller's encoder.

    `source`: an Engine (its outputs `names`) or a pair of TensorLayouts (regressors,
    classificators). `spec`: an SsdSpec (engine/vision/ssd_spec.py) (default BlazeFace short range);
    `anchors`: [N, 4] (cx, cy, w, h), default ssd_anchors(spec). `vertex_count` is what the
    DrawIndirect args ask per instance (6: a quad of two triangles).
    """

    def __init__(
        self,
        source,
        spec=None,
        *,
        names: tuple[str, str] = ("regressors", "classificators"),
        anchors: np.ndarray | None = None,
        max_detections: int = 16,
        vertex_count: int = 6,
        context=None,
    ):
        import wgpu

        if isinstance(source, tuple | list):
            reg, cls = source
            if context is None:
                from engine.gpu import shared_context

                context = shared_context()
        else:
            reg, cls = (source.tensor_layout(n) for n in names)
            context = context or source.ctx
        self.ctx, self.spec = context, spec or BLAZEFACE_SHORT
        spec = self.spec
        anchors = np.asarray(ssd_anchors(spec) if anchors is None else anchors, np.float32)
        n = anchors.shape[0]
        k = int(spec.num_keypoints)
        b, h, w, c = reg.phwc4
        if b * h * w != n or c < 4 + 2 * k:
            raise ValueError(f"regressors {reg.shape} do not hold {n} anchors x {4 + 2 * k} values")
        cb, ch, cw, cc = cls.phwc4
        if cb * ch * cw != n or cc != 1:
            raise ValueError(f"classificators {cls.shape}: expected {n} anchors x 1 class")
        if reg.precision != cls.precision:
            raise ValueError("regressors and classificators differ in precision")
        if not 1 <= max_detections <= 1024:
            raise ValueError(f"max_detections {max_detections} out of range")
        self.record = DetectionRecord(k)
        self.max_detections = max_detections
        cap = 32  # a power of two, at least one bit-set word
        while cap < min(n, MAX_CANDIDATES):
            cap *= 2
        source_text = render_shader(
            "postprocess_ssd.wgsl",
            BINDINGS,
            precision=reg.precision,
            n_anchors=n,
            rows=b * h * w,
            num_keypoints=k,
            scale=wgsl_float(spec.scale),
            clip=wgsl_float(spec.score_clip),
            min_score=wgsl_float(spec.min_score),
            iou=wgsl_float(spec.iou_threshold),
            max_detections=max_detections,
            cap=cap,
            workgroup=WORKGROUP,
            section=self.record.section,
            stride=self.record.stride,
            vertex_count=int(vertex_count),
        )
        dev = self.ctx.device
        self.pipeline = compute_pipeline(self.ctx, source_text, "postprocess_ssd")
        usage = wgpu.BufferUsage
        self.anchors = dev.create_buffer_with_data(data=anchors, usage=usage.STORAGE)
        self.params = zeros_buffer(dev, 48, usage.UNIFORM | usage.COPY_DST)
        self.detections = zeros_buffer(
            dev,
            max_detections * self.record.stride_bytes,
            usage.STORAGE | usage.VERTEX | usage.COPY_SRC,
        )
        self.status = zeros_buffer(dev, 16, usage.STORAGE | usage.COPY_SRC)
        self.args = zeros_buffer(dev, 16, usage.STORAGE | usage.INDIRECT | usage.COPY_SRC)
        resources = {
            "regressors": (reg.buffer, reg.offset, reg.size),
            "classificators": (cls.buffer, cls.offset, cls.size),
            "anchors": self.anchors,
            "params": self.params,
            "detections": self.detections,
            "status": self.status,
            "args": self.args,
        }
        self.group = bind_group(dev, self.pipeline, BINDINGS, resources)
        iw, ih = spec.input_size
        self.set_frame_transform(np.array([[iw, 0, 0], [0, ih, 0]], np.float64), (iw, ih))

    def set_frame_transform(self, frame_from_tensor: np.ndarray, frame_size) -> None:
        """The 2x3 affine normalised tensor coords -> frame pixels, and the frame (w, h)."""
        m = np.asarray(frame_from_tensor, np.float64).reshape(2, 3)
        fw, fh = (float(v) for v in frame_size)
        data = np.zeros((3, 4), np.float32)
        data[:2, :3] = m
        data[2] = (fw, fh, 1.0 / fw, 1.0 / fh)
        self.ctx.device.queue.write_buffer(self.params, 0, data)

    def encode(self, encoder) -> None:
        """Record the post-process (one compute pass, one work group) into `encoder`."""
        dispatch(encoder, self.pipeline, self.group, (1, 1, 1))

    # --- tests and debugging: read back -----------------------------------------------
    def read(self, space: str = "tensor") -> GpuDetections:
        """Read the results back (blocks): `space` tensor, frame_px or frame_norm."""
        q = self.ctx.device.queue
        status = np.frombuffer(q.read_buffer(self.status), np.uint32)
        raw = np.frombuffer(q.read_buffer(self.detections), np.float32)
        rec = self.record
        recs = raw[: self.max_detections * rec.stride].reshape(-1, rec.stride)[: status[0]]
        start = getattr(rec, space)
        coords = recs[:, start : start + rec.coords]
        return GpuDetections(
            boxes=coords[:, :4].copy(),
            keypoints=coords[:, 4:].reshape(-1, rec.num_keypoints, 2).copy(),
            scores=recs[:, 0].copy(),
            group_sizes=recs[:, 1].astype(np.int64),
            anchor_index=recs[:, 2].astype(np.int64),
            candidates=int(status[1]),
            left_out=int(status[2]),
        )
