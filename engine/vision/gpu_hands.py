"""Hands wholly on the GPU: the detect-then-track stage of hand_landmark_tracking_cpu in
compute passes, one submit a frame, a 16-byte tally the only read the app makes.

- input: a frame texture view; the palm detector stage (GpuDetector), the hand landmark
  Engine, the declaration's ROI rules (roi.PALM_ROI, roi.HAND_LANDMARKS_ROI)
- output, on the GPU: `points` (the kept hands' landmarks in frame pixels, 21 vec4 each,
  w = 1), `labels` (per hand: handedness p, label index 0 "Left" / 1 "Right", flag, 0),
  `args` (DrawIndirect of skeleton segments, `pairs` per hand, at 0; of dots, 21 per hand,
  at 16), `tally` (hands, detections used, slots, 0); `process()` reads the slots and
  hands back into a HandsResult
- semantics: what engine/vision/detect_track.py and solutions/hands.py do on the CPU, in
  float32 (shaders/vision: track_associate.wgsl, hand_decode.wgsl, hands_finish.wgsl):
  1. the palm detector (letterbox, model, SSD decode + NMS) runs every frame; its best
     max_num_hands detections count only when fewer hands were tracked, as MediaPipe runs
     the detector only then (the same results, the detector's cost kept);
  2. the detections' ROIs, then the tracked ones, associated (IoU > 0.5: the later wins)
     into at most 2 * max_num_hands - 1 slots (what association can keep);
  3. per slot: the crop (aspect kept), hand_landmark, the decoding; every slot runs, an
     empty one's outputs are ignored;
  4. the kept hands in slot order, their next ROIs for the next frame, the draw args
- usage: made by the webgpu backend for Hands (`gpu_stage`); `steps(view)` records a frame
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
from engine.vision.tracking import MIN_SIMILARITY

SLOT_BYTES, SLOT_VEC4 = 96, 6
NUM_LANDMARKS = 21
HAND_VEC4 = 1 + 2 * NUM_LANDMARKS
ASSOCIATE_BINDINGS = (
    Binding("in", name="detections", type="array<f32>"),
    Binding("in", name="det_status", type="array<u32>"),
    Binding("const", space="uniform", name="params", type="Params"),
    Binding("in", name="tracked", type="array<vec4<f32>>"),
    Binding("out", name="slots", type="array<vec4<f32>>"),
    Binding("out", name="status", type="array<u32>"),
    Binding("out", name="gates", type="array<u32>"),
)
DECODE_BINDINGS = (
    Binding("in", name="landmarks", type="array<vec4<T>>"),
    Binding("in", name="presence", type="array<vec4<T>>"),
    Binding("in", name="handedness", type="array<vec4<T>>"),
    Binding("in", name="world", type="array<vec4<T>>"),
    Binding("in", name="slots", type="array<vec4<f32>>"),
    Binding("const", space="uniform", name="slot", type="Slot"),
    Binding("out", name="hands", type="array<vec4<f32>>"),
)
FINISH_BINDINGS = (
    Binding("in", name="slots", type="array<vec4<f32>>"),
    Binding("in", name="status", type="array<u32>"),
    Binding("in", name="hands", type="array<vec4<f32>>"),
    Binding("out", name="tracked", type="array<vec4<f32>>"),
    Binding("out", name="points", type="array<vec4<f32>>"),
    Binding("out", name="labels", type="array<vec4<f32>>"),
    Binding("out", name="args", type="array<u32>"),
    Binding("out", name="tally", type="array<u32>"),
    Binding("out", name="gates", type="array<u32>"),
)


class HandsFrame(GpuFrame):
    """A Hands frame on the GPU (see the module docstring). `result(hands, palms,
    frame_size, ts, gpu=None)` builds the solution's result, `hand(lm, world, p, flag,
    rect, tracked)` one hand."""

    def __init__(self, backend, detector, engine, crop, *, max_objects: int, palm_roi,
                 next_roi, threshold: float, normalize_z: float, tracking: bool,
                 pairs: int, result, hand, frame_size):  # fmt: skip
        import wgpu

        super().__init__(backend)
        self.detector, self.engine, self.tracking = detector, engine, tracking
        self.result, self.hand, self.frame_size = result, hand, frame_size
        self.pairs = pairs
        self.slots_n = 2 * max_objects - 1  # what association can keep (module docstring)
        ctx, dev = backend.ctx, backend.device
        usage = wgpu.BufferUsage
        store = usage.STORAGE | usage.COPY_SRC | usage.COPY_DST
        self.slots = zeros_buffer(dev, self.slots_n * SLOT_BYTES, store)
        self.status = zeros_buffer(dev, 16, store)
        self.hands = zeros_buffer(dev, self.slots_n * HAND_VEC4 * 16, store)
        self.tracked = zeros_buffer(dev, (1 + 2 * self.slots_n) * 16, store)
        self.points = zeros_buffer(dev, self.slots_n * NUM_LANDMARKS * 16, store | usage.VERTEX)
        self.labels = zeros_buffer(dev, self.slots_n * 16, store)
        self.args = zeros_buffer(dev, 32, store | usage.INDIRECT)
        self.tally = zeros_buffer(dev, 16, store)
        # u32 gates the GPU writes for the models of the next steps: [0] the palm
        # detector (written at the end of a frame for the next), [1 + k] crop slot k
        self.gates = zeros_buffer(dev, 4 * (1 + self.slots_n), store)
        d = detector.decoder
        g = engine.graph
        _, in_h, in_w, _ = engine.tensor_layout(input_name(g)).phwc4
        params = rect_params(palm_roi)
        source = render_shader(
            "vision/track_associate.wgsl", ASSOCIATE_BINDINGS, max_objects=max_objects,
            slots=self.slots_n, candidates=max_objects + self.slots_n,
            frame_px=d.record.frame_px, stride=d.record.stride, start=params["start"],
            end=params["end"], target=params["target"], scale_x=params["scale_x"],
            scale_y=params["scale_y"], shift_x=params["shift_x"], shift_y=params["shift_y"],
            square=params["square"], min_similarity=wgsl_float(MIN_SIMILARITY),
            keep_aspect="true" if crop.keep_aspect else "false",
            input_aspect=wgsl_float(in_h / in_w),
        )  # fmt: skip
        self.associate = compute_pipeline(ctx, source, "track_associate")
        self.associate_group = bind_group(dev, self.associate, ASSOCIATE_BINDINGS, {
            "detections": d.detections, "det_status": d.status, "params": d.params,
            "tracked": self.tracked, "slots": self.slots, "status": self.status,
            "gates": self.gates,
        })  # fmt: skip
        self._crop_stages(backend, engine, crop, threshold, normalize_z, in_w, in_h)
        nxt = rect_params(next_roi)
        source = render_shader(
            "vision/hands_finish.wgsl", FINISH_BINDINGS, n=NUM_LANDMARKS, slots=self.slots_n,
            max_objects=max_objects,
            tracking="true" if tracking else "false", pairs=pairs, scale_x=nxt["scale_x"],
            scale_y=nxt["scale_y"], shift_x=nxt["shift_x"], shift_y=nxt["shift_y"],
            square=nxt["square"],
        )  # fmt: skip
        self.finish = compute_pipeline(ctx, source, "hands_finish")
        self.finish_group = bind_group(dev, self.finish, FINISH_BINDINGS, {
            "slots": self.slots, "status": self.status, "hands": self.hands,
            "tracked": self.tracked, "points": self.points, "labels": self.labels,
            "args": self.args, "tally": self.tally, "gates": self.gates,
        })  # fmt: skip
        self.readback.add("tally", self.tally)
        self.readback.add("slots", self.slots)
        self.readback.add("hands", self.hands)
        detector.add_readback(self.readback)
        self.reset()

    def _crop_stages(self, backend, engine, crop, threshold, normalize_z, in_w, in_h) -> None:
        """A pre-process and a decode per slot (each with its own uniform)."""
        import wgpu

        g = engine.graph
        outs = [engine.tensor_layout(g.tensors[t].name) for t in g.outputs]
        precision = outs[0].precision
        source = render_shader(
            "vision/hand_decode.wgsl", DECODE_BINDINGS, precision=precision,
            n=NUM_LANDMARKS, in_w=wgsl_float(in_w), in_h=wgsl_float(in_h),
            normalize_z=wgsl_float(normalize_z), threshold=wgsl_float(threshold),
        )  # fmt: skip
        self.decode = compute_pipeline(backend.ctx, source, "hand_decode")
        names = ("landmarks", "presence", "handedness", "world")  # hands.hand_outputs order
        resources = {n: (o.buffer, o.offset, o.size) for n, o in zip(names, outs, strict=True)}
        self.pre, self.slot_index, self.decode_groups = [], [], []
        dev = backend.device
        for k in range(self.slots_n):
            self.pre.append(Preprocessor(engine, input_name(g), crop.value_range,
                                         border=crop.border))  # fmt: skip
            index = dev.create_buffer_with_data(data=np.array([k, 0, 0, 0], np.uint32),
                                                usage=wgpu.BufferUsage.UNIFORM)  # fmt: skip
            self.slot_index.append(index)
            self.decode_groups.append(bind_group(dev, self.decode, DECODE_BINDINGS, {
                **resources, "slots": self.slots, "slot": index, "hands": self.hands,
            }))  # fmt: skip

    def reset(self) -> None:
        """Forget the tracked hands: the next frame's detections count."""
        self.device.queue.write_buffer(self.tracked, 0, np.zeros(4, np.float32))
        self.device.queue.write_buffer(self.gates, 0, np.array([1], np.uint32))

    def steps(self, view) -> list:
        steps = [*self.detector.steps(view, gate=(self.gates, 0)),
                 ("postprocess", lambda enc: dispatch(enc, self.associate,
                                                      self.associate_group, (1, 1, 1)))]  # fmt: skip
        for k in range(self.slots_n):
            steps += [("preprocess", lambda enc, k=k: self._crop(enc, k, view)),
                      ("inference", lambda enc, k=k: self.engine.encode(
                          enc, gate=(self.gates, 4 * (1 + k)))),
                      ("postprocess", lambda enc, k=k: dispatch(enc, self.decode,
                                                                self.decode_groups[k],
                                                                (1, 1, 1)))]  # fmt: skip
        steps.append(("postprocess", lambda enc: dispatch(enc, self.finish, self.finish_group,
                                                          (1, 1, 1))))  # fmt: skip
        return steps

    def _crop(self, encoder, k: int, view) -> None:
        """The slot's frame_from_tensor (its record's first 32 bytes) into its pre-process."""
        encoder.copy_buffer_to_buffer(self.slots, k * SLOT_BYTES, self.pre[k].roi, 0, 32)
        self.pre[k].encode(encoder, view)

    def parse(self, data, timestamp_ms):
        tally = np.frombuffer(data["tally"], np.uint32)
        slots = np.frombuffer(data["slots"], np.float32).reshape(-1, SLOT_VEC4, 4)
        hands = np.frombuffer(data["hands"], np.float32).reshape(-1, HAND_VEC4, 4)
        fw, fh = self.frame_size()
        found = []
        for k in range(int(tally[2])):
            head = hands[k, 0]
            if head[0] < 0.5:
                continue
            s = slots[k].astype(np.float64)
            (cx, cy, w, h), rotation = s[2], s[3, 0]
            rect = Rect(cx / fw, cy / fh, w / fw, h / fh, float(rotation))
            lm = hands[k, 1 : 1 + NUM_LANDMARKS, :3].astype(np.float64)
            world = hands[k, 1 + NUM_LANDMARKS :, :3].astype(np.float64)
            found.append(self.hand(lm, world, float(head[2]), float(head[1]), rect,
                                   bool(head[3] > 0.5)))  # fmt: skip
        palms = self.detector.parse(data) if tally[1] else None
        return self.result(tuple(found), palms, (fw, fh), timestamp_ms)

    def gpu_result(self, timestamp_ms):
        return self.result(None, None, self.frame_size(), timestamp_ms, gpu=self)

    def destroy(self) -> None:
        super().destroy()
        for buf in (self.slots, self.status, self.hands, self.tracked, self.points,
                    self.labels, self.args, self.tally, self.gates, *self.slot_index):  # fmt: skip
            buf.destroy()
        for pre in self.pre:
            pre.roi.destroy()
