"""Holistic effect: engine.vision.Holistic's pose, hands and face, drawn as skeletons.

- input: the frame texture; MediaPipe's six holistic models (the manifest's: `ar-demo
  --solution holistic`)
- output: the camera frame with the body's skeleton (POSE_CONNECTIONS, landmarks under
  0.5 visibility hidden), both hands (HAND_CONNECTIONS; green: the subject's left, orange:
  the right) and the face's contours (FACEMESH_CONTOURS)
- options: style (`e`): skeleton+points, skeleton
- usage: `HolisticEffect(ctx, specs, (640, 480), "bgra8unorm")`

Per frame on webgpu: Holistic's GPU frame (engine/vision/gpu_holistic.py) is recorded into
the frame's encoder, one submit, nothing read back: the pose's frame, the hands' re-crops
and the face detector inside the pose's regions, the tracking checks, the hand and face
models, the decoding; every part is drawn in place from its buffers (`draw_indirect`: none
for a part not found; the hands coloured by the side it wrote). On xnnpack, before the
encoder opens: Holistic.process() on the CPU-decided path, then every part's points go up
into the skeleton buffers.
"""

from __future__ import annotations

import numpy as np

from app.effects.base import Effect
from app.effects.hands import COLORS as HAND_COLORS
from app.effects.pose import COLOR as POSE_COLOR
from app.effects.pose import VISIBILITY_THRESHOLD
from app.effects.skeleton import Skeletons
from engine.vision import FACEMESH_CONTOURS, HAND_CONNECTIONS, POSE_CONNECTIONS, Holistic

FACE_COLOR = (0.35, 1.0, 0.9, 0.95)


class HolisticEffect(Effect):
    name = "holistic"
    needs = ("pose_landmarks", "hand_landmarks", "landmarks")
    styles = ("skeleton+points", "skeleton")

    def build(self) -> None:
        options = {**self.solution_options(), "output": "numpy"}
        self.solution = Holistic(**options)
        args = (self.device, self.target_format, self.frame_size)
        face = {"thickness": 1.5, "radius": 1.0}
        frame = self.solution.program
        if frame is not None:  # drawn in place from the GPU frame's buffers
            palette = (HAND_COLORS["Left"], HAND_COLORS["Right"])  # its sides: 0 left, 1 right
            self.parts = {
                "pose": Skeletons(*args, POSE_CONNECTIONS, 33, 1, points=frame.pose.points,
                                  args=frame.pose.args, color=POSE_COLOR),
                "hands": Skeletons(*args, HAND_CONNECTIONS, 21, 2, points=frame.hand_points,
                                   args=frame.hand_args, labels=(frame.labels, palette)),
                "face": Skeletons(*args, FACEMESH_CONTOURS, 468, 1, points=frame.face_points,
                                  args=frame.face_args, color=FACE_COLOR, **face),
            }  # fmt: skip
        else:
            self.parts = {
                "pose": Skeletons(*args, POSE_CONNECTIONS, 33, 1),
                "hands": Skeletons(*args, HAND_CONNECTIONS, 21, 2),
                "face": Skeletons(*args, FACEMESH_CONTOURS, 468, 1, **face),
            }
        self.result = None

    def on_result(self, result) -> None:
        self.result = r = result
        size = np.array([*self.frame_size, self.frame_size[0]], np.float64)
        pose = [] if r.pose_landmarks is None else [
            (r.pose_landmarks * size, r.pose.visibility >= VISIBILITY_THRESHOLD, POSE_COLOR)
        ]  # fmt: skip
        hands = [(lm * size, np.ones(21, bool), HAND_COLORS[label])
                 for lm, label in ((r.left_hand_landmarks, "Left"),
                                   (r.right_hand_landmarks, "Right")) if lm is not None]  # fmt: skip
        face = [] if r.face_landmarks is None else \
            [(r.face_landmarks * size, np.ones(468, bool), FACE_COLOR)]  # fmt: skip
        for part, skeletons in (("pose", pose), ("hands", hands), ("face", face)):
            self.parts[part].update(skeletons)

    def draw(self, render_pass, frame_view) -> None:
        self.draw_frame(render_pass, frame_view)
        dots = self.style_name == "skeleton+points"
        for part, skeletons in self.parts.items():
            skeletons.draw(render_pass, dots=dots and part != "face")

    @property
    def upload_bytes(self) -> int:
        return sum(s.uploads for s in self.parts.values())

    def read_results(self):
        if self.solution.program is not None:
            return self.solution.read()  # the GPU frame's results, read back when asked
        return self.result

    def close(self) -> None:
        super().close()
        for skeletons in self.parts.values():
            skeletons.destroy()


EFFECT = HolisticEffect
