"""Face detection effect: boxes and 6 keypoints from engine.vision.FaceDetector, drawn without
leaving the GPU.

- input: the frame texture; an SSD face detector ([1, N, 4 + 2K] boxes, [1, N, 1] logits;
  BlazeFace short range by default, options from the manifest when it knows the file)
- output: the camera frame with each face's box outline and keypoints
- options: style (`e`): box+keypoints, keypoints, box
- usage: `FaceDetectionEffect(ctx, [spec], (640, 480), "bgra8unorm")`

Steps per frame: the solution's (letterbox pre-process, inference, SSD decode + weighted
NMS into detection records), then a 4-byte GPU copy of the detection count into this
effect's DrawIndirect args. The draw is `draw_indirect`: instance i is detection i, 4 box
edge quads + K keypoint quads (shaders/app/detections.wgsl).
"""

from __future__ import annotations

import numpy as np

from app.effects.base import Effect, overlay_params, render_pipeline
from engine.gpu import Binding, bind_group
from engine.vision import FaceDetector


def indirect_args(device, vertex_count: int):
    """A DrawIndirect args buffer (vertex_count, 0 instances, 0, 0) the GPU fills in."""
    import wgpu

    return device.create_buffer_with_data(
        data=np.array([vertex_count, 0, 0, 0], np.uint32),
        usage=wgpu.BufferUsage.INDIRECT | wgpu.BufferUsage.COPY_DST | wgpu.BufferUsage.COPY_SRC,
    )


# app/detections.wgsl's group 0 (the decoder's records, the overlay uniform), declared
# from these
BINDINGS = (
    Binding("in", name="detections", type="array<f32>"),
    Binding("const", space="uniform", name="params", type="Params"),
)


class FaceDetectionEffect(Effect):
    name = "face-detection"
    needs = ("detection",)
    styles = ("box+keypoints", "keypoints", "box")

    def build(self) -> None:
        import wgpu

        self.solution = FaceDetector(self.spec("detection").graph, **self.solution_options())
        k = self.solution.num_keypoints
        self.args = indirect_args(self.device, 6 * (4 + k))
        rec = self.solution.gpu.record
        self.pipeline = render_pipeline(
            self.device, "app/detections.wgsl", self.target_format, BINDINGS, blend=True,
            num_keypoints=k, stride=rec.stride, frame_px=rec.frame_px,
        )  # fmt: skip
        self.params = self.device.create_buffer(
            size=16, usage=wgpu.BufferUsage.UNIFORM | wgpu.BufferUsage.COPY_DST
        )
        resources = {"detections": self.solution.gpu.detections, "params": self.params}
        self.group = bind_group(self.device, self.pipeline, BINDINGS, resources)
        self.on_style()

    def on_style(self) -> None:
        self.device.queue.write_buffer(self.params, 0, overlay_params(self.frame_size, self.style))

    @property
    def face_flag(self):
        return (self.solution.gpu.status, 0, "uint32")  # the detection count

    def own_steps(self, frame_view):
        def count(enc) -> None:  # instance count = detections
            enc.copy_buffer_to_buffer(self.solution.gpu.status, 0, self.args, 4, 4)

        return [("postprocess", count)]

    def draw(self, render_pass, frame_view) -> None:
        self.draw_frame(render_pass, frame_view)
        render_pass.set_pipeline(self.pipeline)
        render_pass.set_bind_group(0, self.group)
        render_pass.draw_indirect(self.args, 0)


EFFECT = FaceDetectionEffect
