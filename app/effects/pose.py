"""Pose effect: engine.vision.Pose's 33 landmarks, drawn as a skeleton.

- input: the frame texture; pose_detection and a pose landmark model (MediaPipe's)
- output: the camera frame with the body's skeleton (engine.vision POSE_CONNECTIONS); a
  landmark whose smoothed visibility is under 0.5 is hidden, as MediaPipe's drawing_utils
  does
- options: style (`e`): skeleton+points, skeleton
- usage: `PoseEffect(ctx, [detector_spec, landmark_spec], (640, 480), "bgra8unorm")`

Per frame on webgpu: Pose's GPU frame (engine/vision/gpu_pose.py) is recorded into the
frame's encoder, one submit, nothing read back: the detector, the ROI (tracked or
detected), the landmark model, the decoding, the filters, the next ROI; the skeleton is
drawn in place from its buffers (`draw_indirect`: none without a body; the points it
hides have w = 0). On xnnpack, before the encoder opens: Pose.process() on the CPU-decided
path (the detector only while no body is tracked), then the landmarks go up into the
skeleton buffers.
"""

from __future__ import annotations

from app.effects.base import Effect
from app.effects.skeleton import Skeletons
from engine.vision import POSE_CONNECTIONS, Pose

COLOR = (0.35, 0.75, 1.0, 0.95)
VISIBILITY_THRESHOLD = 0.5  # drawing_utils' _VISIBILITY_THRESHOLD


class PoseEffect(Effect):
    name = "pose"
    needs = ("detection", "pose_landmarks")
    styles = ("skeleton+points", "skeleton")

    def build(self) -> None:
        options = {**self.solution_options(), "output": "numpy"}
        self.solution = Pose(self.spec("detection").graph, self.spec("pose_landmarks").graph,
                             **options)  # fmt: skip
        args = (self.device, self.target_format, self.frame_size, POSE_CONNECTIONS, 33, 1)
        frame = self.solution.program
        if frame is not None:  # drawn in place from the GPU frame's buffers
            self.skeletons = Skeletons(*args, points=frame.points, args=frame.args, color=COLOR)
        else:
            self.skeletons = Skeletons(*args)
        self.result = None

    def on_result(self, result) -> None:
        self.result = r = result
        shown = [] if r.landmarks is None else \
            [(r.landmarks_px, r.visibility >= VISIBILITY_THRESHOLD, COLOR)]  # fmt: skip
        self.skeletons.update(shown)

    def draw(self, render_pass, frame_view) -> None:
        self.draw_frame(render_pass, frame_view)
        self.skeletons.draw(render_pass, dots=self.style_name == "skeleton+points")

    @property
    def upload_bytes(self) -> int:
        return self.skeletons.uploads

    def read_results(self):
        if self.solution.program is not None:
            return self.solution.read()  # the GPU frame's results, read back when asked
        return self.result

    def close(self) -> None:
        super().close()
        self.skeletons.destroy()


EFFECT = PoseEffect
