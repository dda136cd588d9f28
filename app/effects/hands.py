"""Hands effect: engine.vision.Hands' 21 landmarks per hand, drawn as skeletons.

- input: the frame texture; a palm detector and a hand landmark model (MediaPipe's)
- output: the camera frame with each hand's skeleton (engine.vision HAND_CONNECTIONS),
  coloured by handedness (green: "Left", orange: "Right", the model's labels, which assume
  a mirrored selfie view), and its landmark dots
- options: style (`e`): skeleton+points, skeleton
- usage: `HandsEffect(ctx, [palm_spec, landmark_spec], (640, 480), "bgra8unorm")`

Per frame on webgpu: Hands' GPU frame (engine/vision/gpu_hands.py) is recorded into the
frame's encoder, one submit, nothing read back: the palm detector, the association with
the tracked hands, the landmark model on each slot, the next ROIs; the skeletons are drawn
in place from its buffers (`draw_indirect`, coloured by the handedness it wrote). On
xnnpack, before the encoder opens: Hands.process() on the CPU-decided path, then the
hands' points go up into the skeleton buffers.
"""

from __future__ import annotations

from app.effects.base import Effect
from app.effects.skeleton import Skeletons
from engine.vision import HAND_CONNECTIONS, Hands

COLORS = {"Left": (0.25, 0.95, 0.45, 0.95), "Right": (1.0, 0.6, 0.15, 0.95)}
MAX_HANDS = 2


class HandsEffect(Effect):
    name = "hands"
    needs = ("detection", "hand_landmarks")
    styles = ("skeleton+points", "skeleton")

    def build(self) -> None:
        self.solution = Hands(self.spec("detection").graph, self.spec("hand_landmarks").graph,
                              max_num_hands=MAX_HANDS, **self.solution_options())  # fmt: skip
        # association may keep one more hand than max_num_hands for a frame (MediaPipe's)
        args = (self.device, self.target_format, self.frame_size, HAND_CONNECTIONS, 21,
                2 * MAX_HANDS - 1)  # fmt: skip
        frame = self.solution.program
        if frame is not None:  # drawn in place from the GPU frame's buffers
            palette = (COLORS["Left"], COLORS["Right"])  # its labels: 0 "Left", 1 "Right"
            self.skeletons = Skeletons(*args, points=frame.points, args=frame.args,
                                       labels=(frame.labels, palette))  # fmt: skip
        else:
            self.skeletons = Skeletons(*args)

    def on_result(self, result) -> None:
        self.skeletons.update(
            (h.landmarks_px, [True] * len(h.landmarks_px), COLORS[h.handedness.label])
            for h in result.hands
        )

    def draw(self, render_pass, frame_view) -> None:
        self.draw_frame(render_pass, frame_view)
        self.skeletons.draw(render_pass, dots=self.style_name == "skeleton+points")

    @property
    def upload_bytes(self) -> int:
        return self.skeletons.uploads

    def close(self) -> None:
        super().close()
        self.skeletons.destroy()


EFFECT = HandsEffect
