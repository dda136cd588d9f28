"""Pose wholly on the GPU: pose_landmark_cpu's detect-then-track stage for one body, its
decoding, filters and mask in compute passes, one submit a frame, a 16-byte tally the
only small read.

- input: a frame texture view; the pose detector stage (GpuDetector), the pose landmark
  Engine, the BodyTracker's options and filters (their parameters); per frame its time
  (the timestamp, else MediaPipe's Python clock), written into a 16-byte uniform before
  the frame is recorded
- output, on the GPU: `points` (the 33 landmarks in frame pixels, w = 1 where the
  smoothed visibility >= 0.5: MediaPipe's drawing hides the others), `args` (DrawIndirect
  of the skeleton's segments at 0, of its dots at 16; no instances without a body),
  `tally` (body kept, detections used, crop had a ROI, tracked), `pose` (landmarks,
  visibility, world landmarks, presence), `mask` (enable_segmentation: the frame-size
  person probability); `process()` reads them back into a PoseResult with one map
- semantics: what solutions/pose.py's BodyTracker does on the CPU (detect_track.py,
  landmarks.py, smoothing.py), in float32 (shaders/vision/pose_*.wgsl):
  1. the pose detector runs every frame on `steps()`' path; its best detection counts
     only when no body was tracked into this frame (MediaPipe runs it only then: the same
     results, the detector's cost kept; process(), which reads each frame's body back,
     leaves it out while tracking); its ROI (roi.POSE_ROI), or the tracked one; the crop
     (pose_roi.wgsl);
  2. the landmark model on the crop; the body kept when its flag > min_tracking_confidence
     and the crop had a ROI; 39 landmarks decoded, refined on the heatmap, projected;
     33 world landmarks rotated (pose_decode.wgsl);
  3. the filters' clocks (pose_clock.wgsl), the filters (pose_smooth.wgsl), the mask
     (pose_mask.wgsl); the landmark and auxiliary filters reset on a frame without a body;
  4. the drawn points, the next ROI from the filtered auxiliary points, the tally
     (pose_finish.wgsl)
- usage: made by the webgpu backend for Pose (`gpu_stage`), and as Holistic's body part
  (gpu_holistic.py: its passes first, then the hands' and the face's); `steps(view)`
  records a frame
"""

from __future__ import annotations

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
from engine.vision.detector import input_name
from engine.vision.gpu_frames import GpuFrame
from engine.vision.preprocess import Preprocessor
from engine.vision.roi import Rect, rect_params
from engine.vision.smoothing import UNCERTAINTY_POLY

PYTHON_FRAME_NS = 33_333_000  # solution_base.py: each process() adds 33333 us
SLOT_BYTES = 96
VISIBLE = 0.5  # drawing_utils' _VISIBILITY_THRESHOLD
MIN_HEATMAP_CONFIDENCE = 0.5  # RefineLandmarksFromHeatmapCalculator's default
FILTER_VEC4 = 3  # per landmark and one-euro filter: x raw, x stored, derivative stored
ROI_BINDINGS = (
    Binding("in", name="detections", type="array<f32>"),
    Binding("in", name="det_status", type="array<u32>"),
    Binding("const", space="uniform", name="params", type="Params"),
    Binding("in", name="tracked", type="array<vec4<f32>>"),
    Binding("out", name="slot", type="array<vec4<f32>>"),
)
DECODE_BINDINGS = (
    Binding("in", name="landmarks", type="array<vec4<T>>"),
    Binding("in", name="flag", type="array<vec4<T>>"),
    Binding("in", name="heatmap", type="array<vec4<T>>"),
    Binding("in", name="world", type="array<vec4<T>>"),
    Binding("in", name="slot", type="array<vec4<f32>>"),
    Binding("out", name="body", type="array<vec4<f32>>"),
)
CLOCK_BINDINGS = (
    Binding("in", name="body", type="array<vec4<f32>>"),
    Binding("in", name="slot", type="array<vec4<f32>>"),
    Binding("const", space="uniform", name="clock", type="Clock"),
    Binding("out", name="state", type="array<vec4<u32>>"),
    Binding("out", name="steps", type="array<vec4<f32>>"),
)
SMOOTH_BINDINGS = (
    Binding("in", name="body", type="array<vec4<f32>>"),
    Binding("in", name="slot", type="array<vec4<f32>>"),
    Binding("in", name="steps", type="array<vec4<f32>>"),
    Binding("out", name="filters", type="array<vec4<f32>>"),
    Binding("out", name="pose", type="array<vec4<f32>>"),
)
MASK_BINDINGS = (
    Binding("in", name="logits", type="array<vec4<T>>"),
    Binding("in", name="slot", type="array<vec4<f32>>"),
    Binding("in", name="steps", type="array<vec4<f32>>"),
    Binding("out", name="mask", type="array<f32>"),
)
FINISH_BINDINGS = (
    Binding("in", name="slot", type="array<vec4<f32>>"),
    Binding("in", name="pose", type="array<vec4<f32>>"),
    Binding("out", name="tracked", type="array<vec4<f32>>"),
    Binding("out", name="points", type="array<vec4<f32>>"),
    Binding("out", name="args", type="array<u32>"),
    Binding("out", name="tally", type="array<u32>"),
    Binding("out", name="gate", type="array<u32>"),
)


def _floats(values) -> str:
    return ", ".join(wgsl_float(v) for v in values)


def _wgsl_bool(value: bool) -> str:
    return "true" if value else "false"


class PoseFrame(GpuFrame):
    """A Pose frame on the GPU (see the module docstring). `body`: the solution's
    BodyTracker (its options, output names and filters); `result`: PoseResult;
    `pairs`: the skeleton's connection count."""

    def __init__(self, backend, detector, engine, crop, body, *, num_landmarks: int,
                 num_body: int, heatmap_kernel: int, pose_roi, pairs: int, result,
                 frame_size):  # fmt: skip
        import wgpu

        super().__init__(backend)
        self.backend, self.detector, self.engine = backend, detector, engine
        self.result, self.frame_size, self.pairs = result, frame_size, pairs
        self.num_body = num_body
        self.segmentation, self.tracking = body.segmentation, body.tracking
        dev, ctx = backend.device, backend.ctx
        usage = wgpu.BufferUsage
        store = usage.STORAGE | usage.COPY_SRC | usage.COPY_DST
        n = num_landmarks
        self.slot = zeros_buffer(dev, SLOT_BYTES, store)
        self.tracked = zeros_buffer(dev, 48, store)
        self.decoded = zeros_buffer(dev, (1 + n + num_body) * 16, store)
        self.state = zeros_buffer(dev, 64, store)
        self.steps_buffer = zeros_buffer(dev, 64, store)
        self.filters = zeros_buffer(dev, (FILTER_VEC4 * (2 * num_body + 2) + num_body) * 16,
                                    store)  # fmt: skip
        self.pose = zeros_buffer(dev, (3 + 2 * num_body) * 16, store)
        self.points = zeros_buffer(dev, num_body * 16, store | usage.VERTEX)
        self.args = zeros_buffer(dev, 32, store | usage.INDIRECT)
        self.tally = zeros_buffer(dev, 16, store)
        # u32: whether the next frame's detector runs (no body tracked into it), written at
        # the end of a frame; the app's path records the detector behind it
        self.gate = zeros_buffer(dev, 16, store)
        self.clock = zeros_buffer(dev, 16, usage.UNIFORM | usage.COPY_DST)
        self.mask = None
        g = engine.graph
        self.pre = Preprocessor(engine, input_name(g), crop.value_range, border=crop.border)
        _, in_h, in_w, _ = engine.tensor_layout(input_name(g)).phwc4
        lm, flag, mask, heatmap, world = (engine.tensor_layout(name) for name in body.outputs)
        self.logits = mask
        roi = rect_params(pose_roi)
        d = detector.decoder

        def pipeline(template, bindings, resources, **params):
            source = render_shader(f"vision/{template}.wgsl", bindings, **params)
            p = compute_pipeline(ctx, source, template)
            return p, bind_group(dev, p, bindings, resources)

        def tensor(layout):
            return layout.buffer, layout.offset, layout.size

        self.roi_pass = pipeline(
            "pose_roi", ROI_BINDINGS,
            {"detections": d.detections, "det_status": d.status, "params": d.params,
             "tracked": self.tracked, "slot": self.slot},
            frame_px=d.record.frame_px, start=roi["start"], end=roi["end"],
            target=roi["target"], scale_x=roi["scale_x"], scale_y=roi["scale_y"],
            shift_x=roi["shift_x"], shift_y=roi["shift_y"], square=roi["square"],
            keep_aspect=_wgsl_bool(crop.keep_aspect),
            input_aspect=wgsl_float(in_h / in_w),
        )  # fmt: skip
        _, hm_h, hm_w, _ = heatmap.phwc4
        self.decode_pass = pipeline(
            "pose_decode", DECODE_BINDINGS,
            {"landmarks": tensor(lm), "flag": tensor(flag), "heatmap": tensor(heatmap),
             "world": tensor(world), "slot": self.slot, "body": self.decoded},
            precision=lm.precision, n=n, body=num_body, in_w=wgsl_float(in_w),
            in_h=wgsl_float(in_h), hm_w=hm_w, hm_h=hm_h, half=(heatmap_kernel - 1) // 2,
            min_confidence=wgsl_float(MIN_HEATMAP_CONFIDENCE),
            threshold=wgsl_float(body.min_tracking_confidence),
        )  # fmt: skip
        landmark_filter, world_filter, aux_filter = (body.landmark_filter, body.world_filter,
                                                     body.aux_filter)  # fmt: skip
        self.frequency = landmark_filter.options[0]  # a new filter's (30 for each)
        self.clock_pass = pipeline(
            "pose_clock", CLOCK_BINDINGS,
            {"body": self.decoded, "slot": self.slot, "clock": self.clock, "state": self.state,
             "steps": self.steps_buffer},
            aux=num_body, smooth=_wgsl_bool(body.smooth), tracking=_wgsl_bool(body.tracking),
            segmentation=_wgsl_bool(body.segmentation),
            smooth_segmentation=_wgsl_bool(body.smooth_segmentation),
            frequency=wgsl_float(self.frequency),
            min_scale=wgsl_float(landmark_filter.min_allowed_object_scale),
        )  # fmt: skip
        self.smooth_pass = pipeline(
            "pose_smooth", SMOOTH_BINDINGS,
            {"body": self.decoded, "slot": self.slot, "steps": self.steps_buffer,
             "filters": self.filters, "pose": self.pose},
            n=n, body=num_body, visibility_alpha=wgsl_float(body.visibility_filter.alpha),
            landmark_filter=_floats(landmark_filter.options[1:]),
            world_filter=_floats(world_filter.options[1:]),
            aux_filter=_floats(aux_filter.options[1:]),
        )  # fmt: skip
        self.finish_pass = pipeline(
            "pose_finish", FINISH_BINDINGS,
            {"slot": self.slot, "pose": self.pose, "tracked": self.tracked,
             "points": self.points, "args": self.args, "tally": self.tally,
             "gate": self.gate},
            body=num_body, tracking=_wgsl_bool(body.tracking), pairs=pairs,
            visible=wgsl_float(VISIBLE), target=roi["target"], scale_x=roi["scale_x"],
            scale_y=roi["scale_y"], shift_x=roi["shift_x"], shift_y=roi["shift_y"],
            square=roi["square"],
        )  # fmt: skip
        self.mask_source = None
        if self.segmentation:
            _, mh, mw, _ = mask.phwc4
            self.mask_source = render_shader(
                "vision/pose_mask.wgsl", MASK_BINDINGS, precision=mask.precision, mw=mw,
                mh=mh, ratio=wgsl_float(body.segmentation_ratio),
                poly=_floats(UNCERTAINTY_POLY),
            )  # fmt: skip
        self._frames = 0  # MediaPipe's Python clock: frame k at k * 33333 us
        self.add_readbacks(self.readback)
        self.reset()

    # --- state -------------------------------------------------------------------------
    def configure(self, frame_size) -> None:
        """Frames of another size: the mask's buffer and pass, the read-back; all forgotten."""
        if self.segmentation:
            import wgpu

            if self.mask is not None:
                self.mask.destroy()
            fw, fh = frame_size
            usage = wgpu.BufferUsage
            self.mask = zeros_buffer(self.device, fw * fh * 4, usage.STORAGE | usage.COPY_SRC)
            p = compute_pipeline(self.backend.ctx, self.mask_source, "pose_mask")
            lay = self.logits
            group = bind_group(self.device, p, MASK_BINDINGS, {
                "logits": (lay.buffer, lay.offset, lay.size), "slot": self.slot,
                "steps": self.steps_buffer, "mask": self.mask,
            })  # fmt: skip
            self.mask_pass = (p, group, (-(-fw // 8), -(-fh // 8), 1))
            self.readback.destroy()
            self.readback = self.backend.readback()
            self.add_readbacks(self.readback)
        self.reset()

    def add_readbacks(self, readback) -> None:
        """What parse() reads, through `readback` (this frame's, or a frame that holds this
        one: Holistic's; again after configure(), which makes the mask anew)."""
        readback.add("tally", self.tally)
        readback.add("pose", self.pose)
        readback.add("slot", self.slot)
        self.detector.add_readback(readback)
        if self.mask is not None:
            readback.add("mask", self.mask)

    def reset(self) -> None:
        """Forget the tracked body, the filters, the last mask and the clock (a new video)."""
        q = self.device.queue
        q.write_buffer(self.tracked, 0, np.zeros(4, np.float32))
        q.write_buffer(self.gate, 0, np.array([1], np.uint32))
        state = np.zeros((4, 4), np.uint32)
        state[:3, 3] = np.array([self.frequency] * 3, np.float32).view(np.uint32)
        q.write_buffer(self.state, 0, state)
        self._frames = 0
        self.present, self.ran_detector = False, True

    def _tick(self, timestamp_ms) -> None:
        """This frame's time (ns) into the clock uniform, as BodyTracker keeps it."""
        self._frames += 1
        t_ns = timestamp_ms * 1_000_000 if timestamp_ms is not None else \
            self._frames * PYTHON_FRAME_NS  # fmt: skip
        t = int(t_ns) & 0xFFFF_FFFF_FFFF_FFFF
        words = np.array([t & 0xFFFF_FFFF, t >> 32, 0, 0], np.uint32)
        self.device.queue.write_buffer(self.clock, 0, words)

    # --- a frame -----------------------------------------------------------------------
    def process(self, view, timestamp_ms, output: str):
        """As GpuFrame's; the detector is left out while the last frame read back had a
        body (tracked into this one: its detections would not count)."""
        self.begin_frame(timestamp_ms)
        result = super().process(view, timestamp_ms, output)
        self.end_frame(result.landmarks is not None, output)
        return result

    def begin_frame(self, timestamp_ms) -> None:
        """Before process()'s frame is recorded: its time, and whether its detector runs."""
        self._tick(timestamp_ms)
        self.ran_detector = not (self.tracking and self.present)
        self.present = False

    def end_frame(self, body: bool, output: str) -> None:
        """After process()'s frame is read back: whether it had a body (the next frame
        then leaves the detector out)."""
        self.present = output == "numpy" and self.tracking and body

    def steps(self, view) -> list:
        """A frame for the caller's encoder, on the Python clock (no timestamp here); the
        detector is recorded behind the gate the last frame wrote (nothing is read back:
        the GPU decides, and skips the model while a body is tracked)."""
        self._tick(None)
        self.present, self.ran_detector = False, True
        return self.frame_steps(view)

    def frame_steps(self, view) -> list:
        def crop(enc) -> None:
            self._dispatch(enc, self.roi_pass)
            enc.copy_buffer_to_buffer(self.slot, 0, self.pre.roi, 0, 32)
            self.pre.encode(enc, view)

        def finish(enc) -> None:
            self._dispatch(enc, self.clock_pass)
            self._dispatch(enc, self.smooth_pass)
            if self.segmentation:
                p, group, grid = self.mask_pass
                dispatch(enc, p, group, grid)
            self._dispatch(enc, self.finish_pass)

        detector = self.detector.steps(view, gate=(self.gate, 0)) if self.ran_detector else []
        return [
            *detector,
            ("preprocess", crop),
            ("inference", self.engine.encode),
            ("postprocess", lambda enc: self._dispatch(enc, self.decode_pass)),
            ("postprocess", finish),
        ]

    def encode_readback(self, encoder) -> None:
        self.readback.encode(encoder, self.readback_names(self.readback))

    def readback_names(self, readback) -> list[str] | None:
        """What `readback` copies this frame: all (None), or all but the detector's records
        when the detector was left out."""
        if self.ran_detector:
            return None
        return [name for name, *_ in readback.items if not name.startswith("det_")]

    @staticmethod
    def _dispatch(encoder, stage) -> None:
        pipeline, group = stage
        dispatch(encoder, pipeline, group, (1, 1, 1))

    def parse(self, data, timestamp_ms):
        size = self.frame_size()
        tally = np.frombuffer(data["tally"], np.uint32)
        detections = self.detector.parse(data) if tally[1] else None
        if not tally[0]:
            return self.result(None, None, None, None, None, None, None, False, detections,
                               size, timestamp_ms)  # fmt: skip
        fw, fh = size
        b = self.num_body
        pose = np.frombuffer(data["pose"], np.float32).reshape(-1, 4).astype(np.float64)
        slot = np.frombuffer(data["slot"], np.float32).reshape(-1, 4).astype(np.float64)
        (cx, cy, w, h), rotation = slot[2], slot[3, 0]
        lm = pose[1 : 1 + b, :3].copy()
        mask = None
        if self.segmentation:
            mask = np.frombuffer(data["mask"], np.float32).reshape(fh, fw).copy()
        return self.result(
            landmarks=lm, landmarks_px=lm * (fw, fh, fw), visibility=pose[1 : 1 + b, 3].copy(),
            presence=pose[1 + b : 1 + 2 * b, 3].copy(),
            world_landmarks=pose[1 + b : 1 + 2 * b, :3].copy(), mask=mask,
            roi=Rect(cx / fw, cy / fh, w / fw, h / fh, float(rotation)),
            tracked=bool(tally[3]), detections=detections, image_size=size,
            timestamp_ms=timestamp_ms,
        )  # fmt: skip

    def gpu_result(self, timestamp_ms):
        return self.result(None, None, None, None, None, None, None, False, None,
                           self.frame_size(), timestamp_ms, gpu=self)  # fmt: skip

    def destroy(self) -> None:
        super().destroy()
        for buf in (self.slot, self.tracked, self.decoded, self.state, self.steps_buffer,
                    self.filters, self.pose, self.points, self.args, self.tally, self.clock,
                    self.gate, self.pre.roi):  # fmt: skip
            buf.destroy()
        if self.mask is not None:
            self.mask.destroy()
