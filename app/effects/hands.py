"""Hands effect: engine.vision.Hands' 21 landmarks per hand, drawn as skeletons.

- input: the frame texture; a palm detector and a hand landmark model (MediaPipe's)
- output: the camera frame with each hand's skeleton (engine.vision HAND_CONNECTIONS),
  coloured by handedness (green: "Left", orange: "Right", the model's labels, which assume
  a mirrored selfie view), and its landmark dots
- options: style (`e`): skeleton+points, skeleton
- usage: `HandsEffect(ctx, [palm_spec, landmark_spec], (640, 480), "bgra8unorm")`

Per frame, before the encoder opens: Hands.process() (the palm detector when fewer than
two hands are tracked, the landmark model on each hand's crop; its ROIs are decided on
the CPU from a ~1 KB read-back), then the hands' points go up into the skeleton buffers.
Inside the encoder: the draw only.
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
        options = {**self.solution_options(), "output": "numpy"}  # it draws from numbers
        self.solution = Hands(self.spec("detection").graph, self.spec("hand_landmarks").graph,
                              max_num_hands=MAX_HANDS, **options)  # fmt: skip
        # association may keep one more hand than max_num_hands for a frame (MediaPipe's)
        self.skeletons = Skeletons(self.device, self.target_format, self.frame_size,
                                   HAND_CONNECTIONS, 21, MAX_HANDS + 1)  # fmt: skip
        self.result = None

    def on_result(self, result) -> None:
        self.result = result
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

    def read_results(self):
        return self.result

    def close(self) -> None:
        super().close()
        self.skeletons.destroy()


EFFECT = HandsEffect
