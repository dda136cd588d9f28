"""What the landmark effects share (hands, pose): skeletons drawn from storage buffers.

- input: per frame, the skeletons to draw: (points [N, 2] frame pixels, shown [N] bool,
  colour RGBA) each, written with one queue.write_buffer
- output: segments along a connection set (engine/vision/connections.py) and a dot per
  landmark, instanced over every skeleton (shaders/app/skeleton.wgsl)
- usage: `sk = Skeletons(device, fmt, frame_size, HAND_CONNECTIONS, 21, max_skeletons=4)`;
  per frame `sk.update([(pts, shown, colour), ...])`, then `sk.draw(render_pass)`

Two ways the points get there: from the CPU (a solution on its CPU-decided path: its
results' points go up, a few hundred bytes a frame, counted in `uploads`), or drawn in
place from a GPU stage's buffers (`points`, `labels`, `args`: Hands' GPU frame on webgpu,
nothing uploaded, the count of skeletons the GPU's).
"""

from __future__ import annotations

import numpy as np

from app.effects.base import render_pipeline
from engine.gpu import Binding, bind_group

# app/skeleton.wgsl's group 0, declared from these (GATE too when the overlay is gated);
# the dots draw reads no pairs: their pipeline's layout leaves that binding out
BINDINGS = (
    Binding("const", space="uniform", name="params", type="Params"),
    Binding("in", name="points", type="array<vec4<f32>>"),
    Binding("in", name="pairs", type="array<vec2<u32>>"),
    Binding("in", name="colors", type="array<vec4<f32>>"),
)
GATE = Binding("in", name="gate", type="array<f32>")
LABELS = Binding("in", name="labels", type="array<vec4<f32>>")


class Skeletons:
    def __init__(self, device, target_format: str, frame_size: tuple[int, int], pairs,
                 count: int, max_skeletons: int, thickness: float = 3.0,
                 radius: float = 3.5, points=None, gate: tuple[object, int] | None = None,
                 color=(1.0, 1.0, 1.0, 0.9), labels=None, args=None):  # fmt: skip
        """`points`: a GPU buffer of vec4 per landmark (w = 1 shown) to draw from instead of
        this one's own (a solution's output, nothing uploaded); `gate`: (buffer, word) of
        a flag that shows the whole overlay while > 0.5; `color`: the skeletons' colour
        when they are drawn from `points`; `labels`: (buffer, (colour 0, colour 1)): each
        skeleton's colour by the label a GPU stage wrote (word 1 of its vec4); `args`: a
        buffer of two DrawIndirect args (segments at 0, dots at 16) a GPU stage fills:
        how many skeletons are drawn is then the GPU's."""
        import wgpu

        self.device, self.count, self.max = device, count, max_skeletons
        self.pairs = np.array(sorted(pairs), np.uint32).reshape(-1, 2)
        usage = wgpu.BufferUsage
        self.params = device.create_buffer_with_data(
            data=self._params(frame_size), usage=usage.UNIFORM | usage.COPY_DST
        )
        self.own_points = points is None
        self.points = (
            points
            if points is not None
            else device.create_buffer(
                size=16 * count * max_skeletons, usage=usage.STORAGE | usage.COPY_DST
            )
        )
        palette = np.asarray(labels[1] if labels else [color] * max_skeletons, np.float32)
        self.colors = device.create_buffer_with_data(
            data=palette, usage=usage.STORAGE | usage.COPY_DST
        )
        self.args = args
        self.pair_buffer = device.create_buffer_with_data(data=self.pairs, usage=usage.STORAGE)
        self.pipelines = {}
        resources = {"params": self.params, "points": self.points, "pairs": self.pair_buffer,
                     "colors": self.colors}  # fmt: skip
        bindings, gate_word = BINDINGS, None
        if gate is not None:
            (resources["gate"], gate_word), bindings = gate, (*bindings, GATE)
        if labels is not None:
            resources["labels"], bindings = labels[0], (*bindings, LABELS)
        for part in ("lines", "dots"):
            pipeline = render_pipeline(device, "app/skeleton.wgsl", target_format, bindings,
                                       blend=True, part=part, thickness=f"{thickness:.1f}",
                                       radius=f"{radius:.1f}", gate=gate_word,
                                       labels=labels is not None)  # fmt: skip
            used = {k: v for k, v in resources.items() if part == "lines" or k != "pairs"}
            self.pipelines[part] = (pipeline, bind_group(device, pipeline, bindings, used))
        self.drawn = 0 if self.own_points else max_skeletons  # drawn from `points`: always
        self.uploads = 0  # bytes written this run

    def _params(self, frame_size) -> np.ndarray:
        data = np.zeros(4, np.float32)
        data[:2] = frame_size
        data.view(np.uint32)[2:] = (self.count, len(self.pairs))
        return data

    def update(self, skeletons) -> None:
        """The skeletons to draw this frame (at most max_skeletons are drawn)."""
        skeletons = list(skeletons)[: self.max]
        self.drawn = len(skeletons)
        if not skeletons:
            return
        points = np.zeros((len(skeletons), self.count, 4), np.float32)
        colors = np.zeros((len(skeletons), 4), np.float32)
        for k, (pts, shown, color) in enumerate(skeletons):
            points[k, :, :2] = np.asarray(pts, np.float32)[:, :2]
            points[k, :, 3] = np.asarray(shown, np.float32)
            colors[k] = color
        self.device.queue.write_buffer(self.points, 0, points)
        self.device.queue.write_buffer(self.colors, 0, colors)
        self.uploads += points.nbytes + colors.nbytes

    def draw(self, render_pass, dots: bool = True) -> None:
        if not self.drawn:
            return
        for part, at, instances in (("lines", 0, len(self.pairs)), ("dots", 16, self.count)):
            if part == "dots" and not dots:
                break
            pipeline, group = self.pipelines[part]
            render_pass.set_pipeline(pipeline)
            render_pass.set_bind_group(0, group)
            if self.args is not None:  # the count is the GPU's
                render_pass.draw_indirect(self.args, at)
            else:
                render_pass.draw(6, self.drawn * instances)

    def destroy(self) -> None:
        for b in (self.params, self.colors, self.pair_buffer):
            b.destroy()
        if self.own_points:
            self.points.destroy()
