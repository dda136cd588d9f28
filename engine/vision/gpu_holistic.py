"""Holistic wholly on the GPU: holistic_landmark_cpu's pose, hands and face in compute
passes, one submit a frame, a 32-byte tally the only small read.

- input: a frame texture view; Pose's GPU frame for the body (gpu_pose.PoseFrame, its
  passes first); the hand_recrop, hand landmark and face landmark Engines and the face
  detector stage (GpuDetector); the solution's rules: the hand sides (wrist, pinky, index),
  the wrist visibility and the flags' threshold; the ROI and tracking rules of roi.py and
  tracking.py (HAND_FROM_POSE_ROI, HAND_RECROP_ROI, HAND_LANDMARKS_ROI, FACE_FROM_POSE_ROI,
  FACE_FROM_DETECTION_ROI, LANDMARKS_ROI, HAND_TRACKING, FACE_TRACKING)
- output, on the GPU: the pose's (`pose`: PoseFrame's points, args, pose record, mask);
  `points` (the kept hands' landmarks in frame pixels, 21 vec4 each, the left first, w = 1;
  from vec4 FACE_POINTS the face's 468), `labels` (per drawn hand: (1, side: 0 left / 1
  right, flag, 0)), `hand_args` and `face_args` (DrawIndirect of segments at 0, of dots at
  16; no instances without the part), `tally` (body, left hand, right hand, face kept;
  each part's ROI: 0 none, 1 re-crop, 2 tracked; 0); `process()` reads the results back
  into a HolisticResult with one map
- semantics: what solutions/holistic.py does on the CPU, in float32 (shaders/vision:
  holistic_roi, holistic_recrop, hand_decode, holistic_face_roi, face_decode,
  holistic_finish):
  1. the pose: PoseFrame's passes (its detector gated while a body is tracked);
  2. the crops from the pose: each hand's when its wrist's smoothed visibility > 0.1, the
     face detector's ROI (its pre-process uniform and its decoder's frame transform:
     buffer copies of what the pass wrote); without a body neither, and every model after
     the pose skips behind its gate (Engine.encode's `gate`);
  3. the face detector inside the pose's face region; hand_recrop per side, its two points
     -> the re-crop ROI, or the ROI of the previous frame's hand while RoiTracking-
     Calculator's checks pass; the best face detection's keypoints -> the face ROI, or the
     previous face's likewise;
  4. the hand landmark model per side and face_landmark, each behind its gate, decoded
     (flags > 0.5);
  5. the landmarks the next frame's checks read (kept on the GPU: no part is tracked into
     a frame after one without it), the drawn points, the args and the tally
- refine_face_landmarks (the attention model's 478 landmarks) stays on the CPU-decided
  path: Holistic makes no GPU frame for it
- usage: made by the webgpu backend for Holistic (`gpu_stage`); `steps(view)` records a
  frame into a caller's encoder, nothing read back
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
from engine.vision.gpu_hands import DECODE_BINDINGS as HAND_DECODE_BINDINGS
from engine.vision.landmarks import landmark_outputs
from engine.vision.preprocess import Preprocessor
from engine.vision.roi import (
    FACE_FROM_DETECTION_ROI,
    FACE_FROM_POSE_ROI,
    HAND_FROM_POSE_ROI,
    HAND_LANDMARKS_ROI,
    HAND_RECROP_ROI,
    Rect,
    rect_params,
)
from engine.vision.tracking import FACE_TRACKING, HAND_TRACKING, LANDMARKS_ROI

SLOT_BYTES, SLOT_VEC4 = 96, 6
HAND_LANDMARKS, FACE_LANDMARKS = 21, 468
HAND_VEC4 = 1 + 2 * HAND_LANDMARKS  # hand_decode.wgsl's record
# `parts`: both hands' records, then the face's from vec4 FACE_AT and `points`: both hands',
# then the face's from vec4 FACE_POINTS; byte offsets of 256 multiples (WebGPU's storage
# binding alignment): the face's decode and draw bind them from there
FACE_AT, FACE_POINTS = 96, 64
PREVIOUS_VEC4 = 2 * (1 + HAND_LANDMARKS) + 1 + FACE_LANDMARKS
ROI_BINDINGS = (
    Binding("in", name="pose", type="array<vec4<f32>>"),
    Binding("in", name="pose_slot", type="array<vec4<f32>>"),
    Binding("out", name="recrop_slots", type="array<vec4<f32>>"),
    Binding("out", name="face_params", type="array<vec4<f32>>"),
    Binding("out", name="gates", type="array<u32>"),
)
RECROP_BINDINGS = (
    Binding("in", name="crop", type="array<vec4<T>>"),
    Binding("in", name="recrop_slots", type="array<vec4<f32>>"),
    Binding("in", name="previous", type="array<vec4<f32>>"),
    Binding("const", space="uniform", name="side", type="Side"),
    Binding("out", name="hand_slots", type="array<vec4<f32>>"),
    Binding("out", name="gates", type="array<u32>"),
)
FACE_ROI_BINDINGS = (
    Binding("in", name="detections", type="array<f32>"),
    Binding("in", name="det_status", type="array<u32>"),
    Binding("in", name="face_params", type="array<vec4<f32>>"),
    Binding("in", name="previous", type="array<vec4<f32>>"),
    Binding("out", name="gates", type="array<u32>"),
    Binding("out", name="face_slot", type="array<vec4<f32>>"),
)
FACE_DECODE_BINDINGS = (
    Binding("in", name="landmarks", type="array<vec4<T>>"),
    Binding("in", name="flag", type="array<vec4<T>>"),
    Binding("in", name="face_slot", type="array<vec4<f32>>"),
    Binding("out", name="face", type="array<vec4<f32>>"),
)
FINISH_BINDINGS = (
    Binding("in", name="parts", type="array<vec4<f32>>"),
    Binding("in", name="gates", type="array<u32>"),
    Binding("in", name="pose_slot", type="array<vec4<f32>>"),
    Binding("out", name="previous", type="array<vec4<f32>>"),
    Binding("out", name="points", type="array<vec4<f32>>"),
    Binding("out", name="labels", type="array<vec4<f32>>"),
    Binding("out", name="hand_args", type="array<u32>"),
    Binding("out", name="face_args", type="array<u32>"),
    Binding("out", name="tally", type="array<u32>"),
)
# gates (u32): [0] the face detector (a body), [1 + side] the re-crop model, [3 + side] the
# hand model, [5] the face model (0 skip; 1 the re-crop ROI, 2 the tracked one)
FACE_DETECTOR_GATE, RECROP_GATE, HAND_GATE, FACE_GATE = 0, 1, 3, 5


def _wgsl_bool(value: bool) -> str:
    return "true" if value else "false"


def _prefixed(prefix: str, params: dict) -> dict:
    return {f"{prefix}_{k}": v for k, v in params.items()}


def _require(req) -> str:
    return ", ".join(wgsl_float(v) for v in (req.rotation_degrees, req.translation, req.scale,
                                             req.margin))  # fmt: skip


def _aspect(engine) -> tuple[float, float, str]:
    """A model input's (width, height) and its aspect (height / width) as WGSL."""
    _, h, w, _ = engine.tensor_layout(input_name(engine.graph)).phwc4
    return float(w), float(h), wgsl_float(h / w)


class HolisticFrame(GpuFrame):
    """A Holistic frame on the GPU (see the module docstring). `pose`: the body's
    PoseFrame; `crops`: the re-crop, hand and face models' CropModels; `result`:
    HolisticResult."""

    def __init__(self, backend, pose, *, recrop, hand, face_detector, face, crops: dict,
                 sides: dict, visibility: float, threshold: float, normalize_z: float,
                 face_points: int, pairs: tuple[int, int], result, frame_size):  # fmt: skip
        import wgpu

        super().__init__(backend)
        self.backend, self.pose, self.result, self.frame_size = backend, pose, result, frame_size
        self.recrop, self.hand, self.face_detector, self.face = recrop, hand, face_detector, face
        self.hand_pairs, self.face_pairs = pairs
        dev, ctx = backend.device, backend.ctx
        usage = wgpu.BufferUsage
        store = usage.STORAGE | usage.COPY_SRC | usage.COPY_DST
        self.recrop_slots = zeros_buffer(dev, 2 * SLOT_BYTES, store)
        self.hand_slots = zeros_buffer(dev, 2 * SLOT_BYTES, store)
        self.face_slot = zeros_buffer(dev, SLOT_BYTES, store)
        self.face_params = zeros_buffer(dev, 48, store)
        self.gates = zeros_buffer(dev, 32, store)
        self.previous = zeros_buffer(dev, PREVIOUS_VEC4 * 16, store)
        self.parts = zeros_buffer(dev, (FACE_AT + 1 + FACE_LANDMARKS) * 16, store)
        self.points = zeros_buffer(dev, (FACE_POINTS + FACE_LANDMARKS) * 16, store | usage.VERTEX)
        self.labels = zeros_buffer(dev, 2 * 16, store)
        self.hand_args = zeros_buffer(dev, 32, store | usage.INDIRECT)
        self.face_args = zeros_buffer(dev, 32, store | usage.INDIRECT)
        self.tally = zeros_buffer(dev, 32, store)
        self.sides = [dev.create_buffer_with_data(data=np.array([k, 0, 0, 0], np.uint32),
                                                  usage=usage.UNIFORM) for k in range(2)]  # fmt: skip

        def pre(engine, crop) -> Preprocessor:
            return Preprocessor(engine, input_name(engine.graph), crop.value_range,
                                border=crop.border)  # fmt: skip

        self.recrop_pre = [pre(recrop, crops["recrop"]) for _ in range(2)]
        self.hand_pre = [pre(hand, crops["hand"]) for _ in range(2)]
        self.face_pre = pre(face, crops["face"])

        def pipeline(template, bindings, resources, **params):
            source = render_shader(f"vision/{template}.wgsl", bindings, **params)
            p = compute_pipeline(ctx, source, template)
            return p, bind_group(dev, p, bindings, resources)

        def tensor(layout):
            return layout.buffer, layout.offset, layout.size

        def outputs(engine) -> list:
            g = engine.graph
            return [engine.tensor_layout(g.tensors[t].name) for t in g.outputs]

        d = face_detector.decoder
        in_w, in_h, recrop_aspect = _aspect(recrop)
        det_w, det_h = d.spec.input_size
        self.roi_pass = pipeline(
            "holistic_roi", ROI_BINDINGS,
            {"pose": pose.pose, "pose_slot": pose.slot, "recrop_slots": self.recrop_slots,
             "face_params": self.face_params, "gates": self.gates},
            body=pose.num_body, left=", ".join(f"{i}u" for i in sides["left"]),
            right=", ".join(f"{i}u" for i in sides["right"]), visibility=wgsl_float(visibility),
            **_prefixed("hand", rect_params(HAND_FROM_POSE_ROI)), recrop_aspect=recrop_aspect,
            face_points=face_points, **_prefixed("face", rect_params(FACE_FROM_POSE_ROI)),
            detector_aspect=wgsl_float(det_h / det_w),
        )  # fmt: skip
        recrop_out = outputs(recrop)[0]  # its two points (the solution reads the first output)
        _, _, hand_aspect = _aspect(hand)
        source = render_shader(
            "vision/holistic_recrop.wgsl", RECROP_BINDINGS, precision=recrop_out.precision,
            in_w=wgsl_float(in_w), in_h=wgsl_float(in_h),
            **_prefixed("recrop", rect_params(HAND_RECROP_ROI)),
            **_prefixed("next", rect_params(HAND_LANDMARKS_ROI)),
            keep_aspect=_wgsl_bool(crops["hand"].keep_aspect), hand_aspect=hand_aspect,
            require=_require(HAND_TRACKING),
        )  # fmt: skip
        self.recrop_pipeline = compute_pipeline(ctx, source, "holistic_recrop")
        self.recrop_groups = [bind_group(dev, self.recrop_pipeline, RECROP_BINDINGS, {
            "crop": tensor(recrop_out), "recrop_slots": self.recrop_slots,
            "previous": self.previous, "side": self.sides[k], "hand_slots": self.hand_slots,
            "gates": self.gates,
        }) for k in range(2)]  # fmt: skip
        hand_outs = outputs(hand)
        in_w, in_h, _ = _aspect(hand)
        source = render_shader(
            "vision/hand_decode.wgsl", HAND_DECODE_BINDINGS, precision=hand_outs[0].precision,
            n=HAND_LANDMARKS, in_w=wgsl_float(in_w), in_h=wgsl_float(in_h),
            normalize_z=wgsl_float(normalize_z), threshold=wgsl_float(threshold),
        )  # fmt: skip
        self.hand_decode = compute_pipeline(ctx, source, "hand_decode")
        names = ("landmarks", "presence", "handedness", "world")  # hands.hand_outputs order
        hand_resources = {n: tensor(o) for n, o in zip(names, hand_outs, strict=True)}
        self.hand_groups = [bind_group(dev, self.hand_decode, HAND_DECODE_BINDINGS, {
            **hand_resources, "slots": self.hand_slots, "slot": self.sides[k],
            "hands": (self.parts, 0, 2 * HAND_VEC4 * 16),
        }) for k in range(2)]  # fmt: skip
        detection_params = rect_params(FACE_FROM_DETECTION_ROI)
        _, _, face_aspect = _aspect(face)
        self.face_roi_pass = pipeline(
            "holistic_face_roi", FACE_ROI_BINDINGS,
            {"detections": d.detections, "det_status": d.status,
             "face_params": self.face_params, "previous": self.previous,
             "gates": self.gates, "face_slot": self.face_slot},
            frame_px=d.record.frame_px, keypoints=d.record.num_keypoints,
            **detection_params, n=FACE_LANDMARKS, previous=2 * (1 + HAND_LANDMARKS),
            **_prefixed("lm", rect_params(LANDMARKS_ROI)), require=_require(FACE_TRACKING),
            keep_aspect=_wgsl_bool(crops["face"].keep_aspect), input_aspect=face_aspect,
        )  # fmt: skip
        lm_name, flag_name = landmark_outputs(face.graph)
        lm, flag = face.tensor_layout(lm_name), face.tensor_layout(flag_name)
        in_w, in_h, _ = _aspect(face)
        self.face_decode = pipeline(
            "face_decode", FACE_DECODE_BINDINGS,
            {"landmarks": tensor(lm), "flag": tensor(flag), "face_slot": self.face_slot,
             "face": (self.parts, FACE_AT * 16, (1 + FACE_LANDMARKS) * 16)},
            precision=lm.precision, n=FACE_LANDMARKS, in_w=wgsl_float(in_w),
            in_h=wgsl_float(in_h), threshold=wgsl_float(threshold),
        )  # fmt: skip
        self.finish_pass = pipeline(
            "holistic_finish", FINISH_BINDINGS,
            {"parts": self.parts, "gates": self.gates, "pose_slot": pose.slot,
             "previous": self.previous, "points": self.points, "labels": self.labels,
             "hand_args": self.hand_args, "face_args": self.face_args, "tally": self.tally},
            n_hand=HAND_LANDMARKS, n_face=FACE_LANDMARKS, face_at=FACE_AT,
            face_points=FACE_POINTS, hand_pairs=self.hand_pairs, face_pairs=self.face_pairs,
        )  # fmt: skip
        self._make_readback()
        self.reset()

    # --- state -------------------------------------------------------------------------
    @property
    def face_points(self) -> tuple:
        """The face's drawn points as a binding: (buffer, byte offset, size)."""
        return self.points, FACE_POINTS * 16, FACE_LANDMARKS * 16

    @property
    def hand_points(self) -> tuple:
        """The hands' drawn points as a binding: (buffer, byte offset, size)."""
        return self.points, 0, 2 * HAND_LANDMARKS * 16

    def _make_readback(self) -> None:
        self.readback.destroy()
        self.readback = self.backend.readback()
        self.pose.add_readbacks(self.readback)
        self.readback.add("holistic_tally", self.tally)
        self.readback.add("parts", self.parts)
        self.readback.add("hand_slots", self.hand_slots)
        self.readback.add("face_slot", self.face_slot)

    def configure(self, frame_size) -> None:
        """Frames of another size: the pose's (its mask), the read-back; all forgotten."""
        self.pose.configure(frame_size)
        self._make_readback()
        self.reset()

    def reset(self) -> None:
        """Forget the tracked body, hands and face, the filters and the clock."""
        self.pose.reset()
        self.device.queue.write_buffer(self.previous, 0, np.zeros(PREVIOUS_VEC4 * 4, np.float32))

    # --- a frame -----------------------------------------------------------------------
    def process(self, view, timestamp_ms, output: str):
        """As GpuFrame's; the pose's detector is left out while the last frame read back
        had a body (PoseFrame.process)."""
        self.pose.begin_frame(timestamp_ms)
        result = super().process(view, timestamp_ms, output)
        self.pose.end_frame(result.pose.landmarks is not None, output)
        return result

    def steps(self, view) -> list:
        """A frame for the caller's encoder (PoseFrame.steps, then the parts): nothing is
        read back, the GPU decides."""
        return [*self.pose.steps(view), *self._part_steps(view)]

    def frame_steps(self, view) -> list:
        return [*self.pose.frame_steps(view), *self._part_steps(view)]

    def _part_steps(self, view) -> list:
        det = self.face_detector

        def crops(enc) -> None:
            self._dispatch(enc, self.roi_pass)
            # the face detector's ROI: its pre-process rows and its decoder's frame transform
            enc.copy_buffer_to_buffer(self.face_params, 0, det.pre.roi, 0, 32)
            enc.copy_buffer_to_buffer(self.face_params, 0, det.decoder.params, 0, 48)

        def gate(word: int) -> tuple:
            return self.gates, 4 * word

        steps = [("postprocess", crops),
                 *det.steps(view, gate=gate(FACE_DETECTOR_GATE)),
                 ("postprocess", lambda enc: self._dispatch(enc, self.face_roi_pass))]  # fmt: skip
        for k in range(2):
            steps += [
                ("preprocess", lambda enc, k=k: self._crop(enc, self.recrop_slots, k,
                                                           self.recrop_pre[k], view)),
                ("inference", lambda enc, k=k: self.recrop.encode(enc,
                                                                  gate=gate(RECROP_GATE + k))),
                ("postprocess", lambda enc, k=k: dispatch(enc, self.recrop_pipeline,
                                                          self.recrop_groups[k], (1, 1, 1))),
            ]  # fmt: skip
        for k in range(2):
            steps += [
                ("preprocess", lambda enc, k=k: self._crop(enc, self.hand_slots, k,
                                                           self.hand_pre[k], view)),
                ("inference", lambda enc, k=k: self.hand.encode(enc, gate=gate(HAND_GATE + k))),
                ("postprocess", lambda enc, k=k: dispatch(enc, self.hand_decode,
                                                          self.hand_groups[k], (1, 1, 1))),
            ]  # fmt: skip

        def finish(enc) -> None:
            self._dispatch(enc, self.face_decode, -(-FACE_LANDMARKS // 64))
            self._dispatch(enc, self.finish_pass, -(-FACE_LANDMARKS // 64))

        return [
            *steps,
            ("preprocess", lambda enc: self._crop(enc, self.face_slot, 0, self.face_pre, view)),
            ("inference", lambda enc: self.face.encode(enc, gate=gate(FACE_GATE))),
            ("postprocess", finish),
        ]

    @staticmethod
    def _crop(encoder, slots, k: int, pre, view) -> None:
        """Slot k's frame_from_tensor (its record's first 32 bytes) into `pre`, then it."""
        encoder.copy_buffer_to_buffer(slots, k * SLOT_BYTES, pre.roi, 0, 32)
        pre.encode(encoder, view)

    @staticmethod
    def _dispatch(encoder, stage, groups: int = 1) -> None:
        pipeline, group = stage
        dispatch(encoder, pipeline, group, (groups, 1, 1))

    def encode_readback(self, encoder) -> None:
        self.readback.encode(encoder, self.pose.readback_names(self.readback))

    def parse(self, data, timestamp_ms):
        pose = self.pose.parse(data, timestamp_ms)
        size = self.frame_size()
        fw, fh = size
        parts = np.frombuffer(data["parts"], np.float32).reshape(-1, 4).astype(np.float64)
        hand_slots = np.frombuffer(data["hand_slots"], np.float32).reshape(-1, SLOT_VEC4, 4)
        face_slot = np.frombuffer(data["face_slot"], np.float32).reshape(SLOT_VEC4, 4)

        def rect(slot) -> Rect:
            (cx, cy, w, h), rotation = slot[2].astype(np.float64), slot[3, 0]
            return Rect(cx / fw, cy / fh, w / fw, h / fh, float(rotation))

        rois, found = {}, {}
        for k, side in enumerate(("left", "right")):
            if hand_slots[k, 3, 3] > 0.5:
                rois[side] = rect(hand_slots[k])
            at = k * HAND_VEC4
            if parts[at, 0] > 0.5:
                found[side] = parts[at + 1 : at + 1 + HAND_LANDMARKS, :3].copy()
        if face_slot[3, 3] > 0.5:
            rois["face"] = rect(face_slot)
        if parts[FACE_AT, 0] > 0.5:
            found["face"] = parts[FACE_AT + 1 : FACE_AT + 1 + FACE_LANDMARKS, :3].copy()
        return self.result(pose, found.get("left"), found.get("right"), found.get("face"), rois,
                           size, timestamp_ms)  # fmt: skip

    def gpu_result(self, timestamp_ms):
        return self.result(self.pose.gpu_result(timestamp_ms), None, None, None, {},
                           self.frame_size(), timestamp_ms)  # fmt: skip

    def destroy(self) -> None:
        super().destroy()
        self.pose.destroy()
        for buf in (self.recrop_slots, self.hand_slots, self.face_slot, self.face_params,
                    self.gates, self.previous, self.parts, self.points, self.labels,
                    self.hand_args, self.face_args, self.tally, *self.sides):  # fmt: skip
            buf.destroy()
        for pre in (*self.recrop_pre, *self.hand_pre, self.face_pre):
            pre.roi.destroy()
