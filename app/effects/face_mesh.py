"""Face mesh effect: two models chained on the GPU, 468 landmarks drawn from a vertex buffer.

- input: the frame texture; an SSD face detector and face_landmark (468 x 3 + face flag)
- output: the camera frame with the mesh points (and the rotated crop outline)
- options: style (`e`): points+roi, points
- usage: `FaceMeshEffect(ctx, [detector_spec, landmark_spec], (640, 480), "bgra8unorm")`

Steps per frame, one encoder, nothing read back:
1. detector pre-process (letterbox) -> detector inference -> SSD decode + NMS;
2. ROI: the best detection -> MediaPipe's rotated square crop (1.5x, eyes level), written
   straight into the landmark pre-process's ROI uniform (engine.vision.DetectionRoi);
3. landmark pre-process (that crop, [0, 1]) -> landmark inference -> projection of the 468
   points to frame pixels plus DrawIndirect args whose instance count is 0 without a face.
Draw: `draw_indirect` of round point quads (shaders/app/mesh.wgsl) and the ROI outline.
"""

from __future__ import annotations

from app.effects import EFFECTS
from app.effects.base import Effect, overlay_params, render_pipeline
from app.effects.face_detection import build_detector
from engine.vision import DetectionRoi, LandmarkProjector
from engine.vision.preprocess import Preprocessor


class FaceMeshEffect(Effect):
    name = "face-mesh"
    styles = EFFECTS["face-mesh"].styles

    def build(self) -> None:
        import wgpu

        det_spec = next(s for s in self.specs if s.role == "detection")
        lm_spec = next(s for s in self.specs if s.role == "landmarks")
        self.det_pre, self.decoder = build_detector(self, det_spec, vertex_count=6)
        lm_engine = self.engines["landmarks"]
        self.lm_pre = Preprocessor(lm_engine, lm_spec.input_name, value_range=lm_spec.value_range)
        self.roi = DetectionRoi(self.decoder, self.lm_pre)
        self.projector = LandmarkProjector(lm_engine, self.roi, vertex_count=6,
                                           input_name=lm_spec.input_name)  # fmt: skip
        dev = self.device
        self.params = dev.create_buffer(
            size=16, usage=wgpu.BufferUsage.UNIFORM | wgpu.BufferUsage.COPY_DST
        )
        self.points_pipeline = render_pipeline(
            dev, "app/mesh.wgsl", self.target_format, blend=True,
            buffers=[{"array_stride": 16, "step_mode": "instance",
                      "attributes": [{"format": "float32x4", "offset": 0, "shader_location": 0}]}],
        )  # fmt: skip
        self.points_group = dev.create_bind_group(
            layout=self.points_pipeline.get_bind_group_layout(0),
            entries=[{"binding": 0, "resource": {"buffer": self.params, "offset": 0, "size": 16}}],
        )
        self.roi_pipeline = render_pipeline(dev, "app/roi.wgsl", self.target_format, blend=True)
        self.roi_group = dev.create_bind_group(
            layout=self.roi_pipeline.get_bind_group_layout(0),
            entries=[
                {"binding": 0, "resource": {"buffer": self.roi.buffer, "offset": 0, "size": 96}},
                {"binding": 1, "resource": {"buffer": self.projector.status, "offset": 0,
                                            "size": self.projector.status.size}},
            ],
        )  # fmt: skip
        self.on_style()

    def on_style(self) -> None:
        self.device.queue.write_buffer(self.params, 0, overlay_params(self.frame_size, self.style))

    def steps(self, frame_view):
        return [
            ("preprocess", lambda enc: self.det_pre.encode(enc, frame_view)),
            ("inference", self.engines["detection"].encode),
            ("postprocess", lambda enc: (self.decoder.encode(enc), self.roi.encode(enc))),
            ("preprocess", lambda enc: self.lm_pre.encode(enc, frame_view)),
            ("inference", self.engines["landmarks"].encode),
            ("postprocess", self.projector.encode),
        ]

    def draw(self, render_pass, frame_view) -> None:
        self.draw_frame(render_pass, frame_view)
        if self.style_name == "points+roi":
            render_pass.set_pipeline(self.roi_pipeline)
            render_pass.set_bind_group(0, self.roi_group)
            render_pass.draw(24)
        render_pass.set_pipeline(self.points_pipeline)
        render_pass.set_bind_group(0, self.points_group)
        render_pass.set_vertex_buffer(0, self.projector.points, 0, self.projector.num_points * 16)
        render_pass.draw_indirect(self.projector.args, 0)
