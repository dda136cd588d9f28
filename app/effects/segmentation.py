"""Segmentation effect: the person stays, the background is blurred, replaced or tinted.

- input: the frame texture; a [1, H, W, 1] person-probability model (selfie_segmentation)
- output: one full-screen draw that composites camera and background through the mask
- options: style (`e` cycles): blur, replace, tint, mask (the mask itself, red)
- blur: a compute pass (shaders/app/blur.wgsl) blurs the frame into a quarter-size texture,
  the composite samples it; the "postprocess" stage, run only in that style
- usage: `SegmentationEffect(ctx, [spec], (640, 480), "bgra8unorm")`

Steps per frame: engine.vision.SelfieSegmenter's (pre-process: the frame stretched onto the
input, [0, 1] -> inference). No post-process pass: the fragment shader binds the engine's output buffer (PHWC4, one slice,
vec4 index y * W + x, lane 0) as read-only storage, resamples the mask bilinearly at the
fragment's position (stretch: frame uv = mask uv) and smooths the edge with a smoothstep.
"""

from __future__ import annotations

import numpy as np

from app.effects.base import FRAME_BINDINGS, Effect, render_pipeline
from engine.gpu import Binding, bind_group, render_shader
from engine.vision import SelfieSegmenter

BLUR_DOWNSCALE = 4  # the blurred background is a quarter of the frame's size
BLUR_RADIUS_PX = 16.0  # disc radius in frame pixels (then the linear upsampling smooths it)
# The group 0 of each shader, declared from these: app/blur.wgsl blurs the frame into the
# quarter-size texture; app/segmentation.wgsl composites frame, mask and background.
BLUR_BINDINGS = (
    *FRAME_BINDINGS,
    Binding("out", name="blurred", type="texture_storage_2d<rgba8unorm, write>"),
)
COMPOSITE_BINDINGS = (
    *FRAME_BINDINGS,
    Binding("in", name="mask", type="array<vec4<T>>"),
    Binding("const", space="uniform", name="params", type="Params"),
    Binding("in", name="blurred", type="texture_2d<f32>"),
)


class SegmentationEffect(Effect):
    name = "segmentation"
    needs = ("segmentation",)
    styles = ("blur", "replace", "tint", "mask")
    plain_background = False  # the frame composited with the mask

    def build(self) -> None:
        import wgpu

        self.solution = SelfieSegmenter(self.spec("segmentation").graph,
                                        **self.solution_options())  # fmt: skip
        self.mask = self.solution.gpu  # the model-resolution mask (TensorLayout)
        self.params = self.device.create_buffer(
            size=16, usage=wgpu.BufferUsage.UNIFORM | wgpu.BufferUsage.COPY_DST
        )
        self.device.queue.write_buffer(
            self.params, 0, np.array([*self.frame_size, 0, 0], np.float32)
        )
        self._pipelines: dict[int, object] = {}
        self._groups: dict[int, tuple] = {}
        fw, fh = self.frame_size
        bw, bh = max(1, fw // BLUR_DOWNSCALE), max(1, fh // BLUR_DOWNSCALE)
        self.blurred = self.device.create_texture(
            size=(bw, bh, 1), format="rgba8unorm", label="blurred background",
            usage=wgpu.TextureUsage.STORAGE_BINDING | wgpu.TextureUsage.TEXTURE_BINDING,
        )  # fmt: skip
        self.blurred_view = self.blurred.create_view()
        code = render_shader("app/blur.wgsl", BLUR_BINDINGS, radius=f"{BLUR_RADIUS_PX!r}")
        module = self.device.create_shader_module(code=code, label="app_blur")
        self.blur_pipeline = self.device.create_compute_pipeline(
            layout="auto", compute={"module": module, "entry_point": "main"}
        )
        self.blur_grid = (-(-bw // 8), -(-bh // 8), 1)
        self._blur_group = None

    def _blur(self, encoder, frame_view) -> None:
        if self._blur_group is None or self._blur_group[0] is not frame_view:
            resources = {"frame": frame_view, "frame_sampler": self.sampler,
                         "blurred": self.blurred_view}  # fmt: skip
            group = bind_group(self.device, self.blur_pipeline, BLUR_BINDINGS, resources)
            self._blur_group = (frame_view, group)
        p = encoder.begin_compute_pass()
        p.set_pipeline(self.blur_pipeline)
        p.set_bind_group(0, self._blur_group[1])
        p.dispatch_workgroups(*self.blur_grid)
        p.end()

    def _pipeline(self):
        """The composite pipeline of the current style (style baked into the shader)."""
        if self.style not in self._pipelines:
            _, mh, mw, _ = self.mask.phwc4
            self._pipelines[self.style] = render_pipeline(
                self.device, "app/segmentation.wgsl", self.target_format, COMPOSITE_BINDINGS,
                precision=self.mask.precision, mask_w=mw, mask_h=mh, style=self.style,
            )  # fmt: skip
        return self._pipelines[self.style]

    def own_steps(self, frame_view):
        if self.style_name == "blur":
            return [("postprocess", lambda enc: self._blur(enc, frame_view))]
        return []

    def draw(self, render_pass, frame_view) -> None:
        pipeline = self._pipeline()
        cached = self._groups.get(self.style)
        if cached is None or cached[0] is not frame_view:
            mask = (self.mask.buffer, self.mask.offset, self.mask.size)
            resources = {"frame": frame_view, "frame_sampler": self.sampler, "mask": mask,
                         "params": (self.params, 0, 16), "blurred": self.blurred_view}  # fmt: skip
            group = bind_group(self.device, pipeline, COMPOSITE_BINDINGS, resources)
            self._groups[self.style] = cached = (frame_view, group)
        render_pass.set_pipeline(pipeline)
        render_pass.set_bind_group(0, cached[1])
        render_pass.draw(3)


EFFECT = SegmentationEffect
