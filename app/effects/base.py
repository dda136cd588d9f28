"""What every effect shares: a solution of engine.vision, render pipelines, the frame blit.

An effect turns the frame texture into a picture:
- `build()`: its solution (made with `solution_options()`: the models' graphs, output="gpu"
  where it draws from the solution's buffers) and its draw pipelines;
- a frame in two phases. `prepare(frame_view, image)`: the CPU part, before the
  pipeline's encoder opens: the solution's CPU-decided path when it has no GPU-resident
  frame (its own submits and reads: read-backs, XNNPACK), then the effect's own uploads;
  `image` is the frame as uploaded (BGR numpy), which a backend that reads host frames
  takes instead of the texture (`model_frame`). `steps(frame_view)`: the GPU part, only
  recorded into the pipeline's one encoder, as (stage name, encode function);
- `draw(render_pass, frame_view)`: the camera frame plus the overlay, read from the
  solution's buffers; `frame_view` None: the pipeline copied the frame into the target
  already (effects whose background is the plain frame, `plain_background`);
- `cycle_style()`: the `e` key; `rebuild(planner)`: a new solution with another memory plan
  (app/pipeline.py builds a whole new effect off the display thread instead); `close()`;
- `read_results()`: the frame's results as numbers (--results only: one read-back);
  `face_flag`: where a 4-byte face flag lives on the GPU (app/results.FaceTally), or None;
- `depth_format`: None, or the depth attachment's format the render pass needs for the
  current style (3D face effects; `DepthBuffer` makes it); `options_from(args)`: the
  effect's own options from the command line (its constructor's keywords);
- `frame_counts`: the submits and blocking reads the solution made in the last prepare.
A subclass sets `needs` (model roles, --model order), `styles`, and its module names it
`EFFECT` (app/effects/__init__.py).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from engine.gpu import Binding, bind_group, render_shader

if TYPE_CHECKING:
    from app.models import ModelSpec

Step = tuple[str, Callable[[object], None]]
# app/frame.wgsl's group 0 (the camera frame and its sampler), declared from these
FRAME_BINDINGS = (
    Binding("in", name="frame", type="texture_2d<f32>"),
    Binding("in", name="frame_sampler", type="sampler"),
)


def render_pipeline(device, template: str, target_format: str, bindings=(),
                    topology="triangle-list", blend: bool = False, label: str = "", buffers=(),
                    **params):  # fmt: skip
    """A render pipeline from shaders/<template> (entry points vs / fs), auto layout;
    `bindings`: its group 0, declared from them (engine.gpu.render_shader; bind groups:
    engine.gpu.bind_group); `buffers`: vertex buffer layouts."""
    code = render_shader(template, bindings, **params)
    module = device.create_shader_module(code=code, label=label or template)
    target = {"format": target_format}
    if blend:
        target["blend"] = {
            "color": {"src_factor": "src-alpha", "dst_factor": "one-minus-src-alpha",
                      "operation": "add"},
            "alpha": {"src_factor": "one", "dst_factor": "one-minus-src-alpha",
                      "operation": "add"},
        }  # fmt: skip
    return device.create_render_pipeline(
        layout="auto",
        vertex={"module": module, "entry_point": "vs", "buffers": list(buffers)},
        primitive={"topology": topology},
        fragment={"module": module, "entry_point": "fs", "targets": [target]},
        label=label or template,
    )


def overlay_params(frame_size: tuple[int, int], style: int) -> np.ndarray:
    """The overlay shaders' 16-byte Params uniform (app_detections / app_mesh):
    frame size (f32 x 2), style (u32), padding."""
    data = np.array([*frame_size, 0, 0], np.float32)
    data.view(np.uint32)[2] = style
    return data


class DepthBuffer:
    """The render pass's depth attachment for an effect whose `depth_format` asks for one:
    one texture of the target's size, made again when the size or format changes. Frames
    in flight share it: the queue runs their passes in order, each clears it."""

    def __init__(self):
        self.texture = self.view = None

    def attachment(self, device, size, fmt: str) -> dict:
        import wgpu

        w, h = int(size[0]), int(size[1])
        t = self.texture
        if t is None or (t.size[0], t.size[1]) != (w, h) or t.format != fmt:
            self.destroy()
            self.texture = device.create_texture(size=(w, h, 1), format=fmt,
                                                 usage=wgpu.TextureUsage.RENDER_ATTACHMENT)  # fmt: skip
            self.view = self.texture.create_view()
        return {"view": self.view, "depth_clear_value": 1.0, "depth_load_op": "clear",
                "depth_store_op": "discard"}  # fmt: skip

    def destroy(self) -> None:
        if self.texture is not None:
            self.texture.destroy()
        self.texture = self.view = None


class Effect:
    """Base class; subclasses set `name`, `needs`, `styles` and implement build/draw."""

    name = ""
    needs: tuple[str, ...] = ()
    styles: tuple[str, ...] = ("default",)
    plain_background = True  # the frame as it is under the overlay (draw_frame)

    def __init__(self, ctx, specs: list[ModelSpec], frame_size: tuple[int, int],
                 target_format: str, precision: str = "fp32", planner: str | None = None,
                 storage: str = "auto", kernels: str = "optimized", backend: str = "auto"):  # fmt: skip
        self.ctx, self.device = ctx, ctx.device
        self.specs, self.frame_size, self.target_format = specs, frame_size, target_format
        self.precision, self.planner, self.storage = precision, planner, storage
        self.kernels = kernels  # the engines' kernel set (engine/gpu/compile.py KERNEL_SETS)
        self.backend = backend  # asked for; `backend_name`: what the solution chose
        self.style = 0
        self.engines: dict[str, object] = {}
        self.solution = None
        self.sampler = self.device.create_sampler(mag_filter="linear", min_filter="linear")
        self._blit = None
        self.rebuild(planner)

    # --- the solution ----------------------------------------------------------------
    def rebuild(self, planner: str | None) -> None:
        """(Re)make the solution with `planner` and rebind everything that reads it."""
        self.planner, old = planner, self.solution
        self.build()
        self.solution.prepare(self.frame_size)
        # the GPU engines (warm-up, memory plans, planner switches): none on xnnpack
        self.engines = self.solution.engines
        if old is not None:
            old.close()  # the pipeline waits for every frame: nothing of it is in flight

    def close(self) -> None:
        """Release the solution's GPU memory (the effect is no longer drawn)."""
        if self.solution is not None:
            self.solution.close()

    def solution_options(self) -> dict:
        """engine.vision solution options: this device, the engine options, the backend, no
        readback (xnnpack: the results uploaded where the draws read them)."""
        return {"context": self.ctx, "precision": self.precision, "planner": self.planner,
                "storage": self.storage, "kernels": self.kernels, "output": "gpu",
                "backend": self.backend, "bgr": True}  # fmt: skip

    def model_frame(self, frame_view, image):
        """What the solution's models read: the host image (BGR, the frame as uploaded)
        when there is one and the backend reads host frames (xnnpack: reading the texture
        back would wait for the queue, so for the previous frame's render); else the
        texture. The pixels are the same bytes either way."""
        if image is not None and self.solution.backend.reads_host_frames:
            return image
        return frame_view

    @property
    def backend_name(self) -> str:
        """The backend the solution runs its models on: "webgpu" or "xnnpack"."""
        return self.solution.backend.name

    @property
    def frame_counts(self) -> tuple[int, int]:
        """(submits, blocking reads) the solution made for the last frame."""
        return self.solution.last_frame_counts

    @property
    def upload_bytes(self) -> int:
        """Bytes this effect uploaded from the CPU for its overlay (skeleton points)."""
        return 0

    def spec(self, role: str):
        return next(s for s in self.specs if s.role == role)

    def read_results(self):
        """The last frame's results as numbers (blocks: one readback)."""
        return self.solution.read()

    @property
    def face_flag(self) -> tuple[object, int, str] | None:
        return None

    @property
    def depth_format(self) -> str | None:
        """The render pass's depth attachment format this style needs (None: none)."""
        return None

    @classmethod
    def options_from(cls, args) -> dict:
        """This effect's own keywords from ar-demo's options (app/options.py)."""
        return {}

    def build(self) -> None:
        """Make `self.solution` and the draw pipelines."""
        raise NotImplementedError

    def prepare(self, frame_view, image=None) -> None:
        """The CPU part of a frame (see the module docstring): the solution's, then
        `on_result` with its result when it ran on the CPU."""
        result = self.solution.prepare_frame(self.model_frame(frame_view, image))
        if result is not None:
            self.on_result(result)

    def on_result(self, result) -> None:
        """The effect's CPU work on a result of the CPU-decided path (uploads)."""

    def steps(self, frame_view) -> list[Step]:
        """The GPU part of a frame, recorded only: the solution's steps (none on the
        CPU-decided path), then the effect's own (`own_steps`)."""
        return [*self.solution.steps(frame_view), *self.own_steps(frame_view)]

    def own_steps(self, frame_view) -> list[Step]:
        return []

    def draw(self, render_pass, frame_view) -> None:
        raise NotImplementedError

    def cycle_style(self) -> str:
        self.style = (self.style + 1) % len(self.styles)
        self.on_style()
        return self.styles[self.style]

    def on_style(self) -> None:
        pass

    @property
    def style_name(self) -> str:
        return self.styles[self.style]

    # --- the camera frame as background ------------------------------------------------
    def draw_frame(self, render_pass, frame_view) -> None:
        """The camera frame over the whole target (a full-screen triangle); None: the
        pipeline copied it there (a texture copy, where the target has the frame's size
        and format: on a CPU rasterizer the blit is most of the frame's render time)."""
        if frame_view is None:
            return
        if self._blit is None or self._blit[0] is not frame_view:
            pipeline = render_pipeline(self.device, "app/frame.wgsl", self.target_format,
                                       FRAME_BINDINGS)  # fmt: skip
            resources = {"frame": frame_view, "frame_sampler": self.sampler}
            group = bind_group(self.device, pipeline, FRAME_BINDINGS, resources)
            self._blit = (frame_view, pipeline, group)
        _, pipeline, group = self._blit
        render_pass.set_pipeline(pipeline)
        render_pass.set_bind_group(0, group)
        render_pass.draw(3)
