"""What every effect shares: engines built from model specs, render pipelines, the frame blit.

An effect turns the frame texture into a picture, all on the GPU:
- `steps(frame_view)`: the compute stages in order, as (stage name, encode function):
  pre-process, inference, post-process (a two-model effect repeats them per model);
- `draw(render_pass)`: the camera frame plus the overlay, read from the output buffers;
- `cycle_style()`: the `e` key; `rebuild(planner)`: new engines with another memory plan.
Nothing here reads a tensor back: overlays bind the engine's output buffers directly.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from engine.gpu.codegen import render

if TYPE_CHECKING:
    from app.models import ModelSpec

Step = tuple[str, Callable[[object], None]]


def render_pipeline(device, template: str, target_format: str, topology="triangle-list",
                    blend: bool = False, label: str = "", buffers=(), **params):  # fmt: skip
    """A render pipeline from shaders/<template> (entry points vs / fs), auto layout;
    `buffers`: vertex buffer layouts."""
    module = device.create_shader_module(code=render(template, **params), label=label or template)
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


def buffer_entry(binding: int, layout) -> dict:
    """A bind group entry for an engine TensorLayout (or anything with buffer/offset/size)."""
    return {"binding": binding,
            "resource": {"buffer": layout.buffer, "offset": layout.offset, "size": layout.size}}  # fmt: skip


def overlay_params(frame_size: tuple[int, int], style: int) -> np.ndarray:
    """The overlay shaders' 16-byte Params uniform (app_detections / app_mesh):
    frame size (f32 x 2), style (u32), padding."""
    data = np.array([*frame_size, 0, 0], np.float32)
    data.view(np.uint32)[2] = style
    return data


class Effect:
    """Base class; subclasses set `name`, `styles` and implement build/steps/draw."""

    name = ""
    styles: tuple[str, ...] = ("default",)

    def __init__(self, ctx, specs: list[ModelSpec], frame_size: tuple[int, int],
                 target_format: str, precision: str = "fp32", planner: str | None = None,
                 storage: str = "auto"):  # fmt: skip
        self.ctx, self.device = ctx, ctx.device
        self.specs, self.frame_size, self.target_format = specs, frame_size, target_format
        self.precision, self.planner, self.storage = precision, planner, storage
        self.style = 0
        self.engines: dict[str, object] = {}
        self.sampler = self.device.create_sampler(mag_filter="linear", min_filter="linear")
        self._blit = None
        self.rebuild(planner)

    # --- engines ---------------------------------------------------------------------
    def rebuild(self, planner: str | None) -> None:
        """(Re)compile the engines with `planner` and rebind everything that reads them."""
        from engine.gpu.engine import Engine

        self.planner = planner
        self.engines = {
            s.role: Engine(
                s.graph,
                context=self.ctx,
                precision=self.precision,
                planner=planner,
                storage=self.storage,
            )
            for s in self.specs
        }
        self.build()

    def build(self) -> None:
        raise NotImplementedError

    def steps(self, frame_view) -> list[Step]:
        raise NotImplementedError

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
        """The camera frame over the whole target (a full-screen triangle)."""
        if self._blit is None or self._blit[0] is not frame_view:
            pipeline = render_pipeline(self.device, "app/frame.wgsl", self.target_format)
            group = self.device.create_bind_group(
                layout=pipeline.get_bind_group_layout(0),
                entries=[{"binding": 0, "resource": frame_view},
                         {"binding": 1, "resource": self.sampler}],
            )  # fmt: skip
            self._blit = (frame_view, pipeline, group)
        _, pipeline, group = self._blit
        render_pass.set_pipeline(pipeline)
        render_pass.set_bind_group(0, group)
        render_pass.draw(3)
