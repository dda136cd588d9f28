"""The window's start-up screen: the camera (or first video) frame, dimmed, with the build's
progress written over it on the CPU.

- input: a BGR frame, a BuildStatus (app/build.py)
- output: a new BGR frame of the same size: "starting <effect>", a line and a bar per model
  (planning, creating pipelines k/n, compiling shaders k/n, ready), the seconds elapsed
- why on the CPU: it must show from the first second, before any of the effect's shaders
  (or imgui's) exist; the only GPU work is the frame blit (one small render pipeline)
- `StartupView`: draws such a BGR image over a render target (the frame uploader's
  texture, one blit pipeline); `prime()` does it once offscreen before the window opens
- usage: `view = StartupView(pipeline.uploader, fmt); view.show(startup_screen(bgr, st), tv)`
"""

from __future__ import annotations

import cv2
import numpy as np

from app.build import since_launch
from app.effects.base import FRAME_BINDINGS, render_pipeline
from engine.gpu import Fence, bind_group

FONT = cv2.FONT_HERSHEY_SIMPLEX
WHITE, GREY, ACCENT = (255, 255, 255), (190, 190, 190), (80, 200, 255)  # BGR


def startup_screen(bgr: np.ndarray, status, hint: bool = True) -> np.ndarray:
    """`bgr` dimmed, with the build's progress in a panel (see the module docstring)."""
    h, w = bgr.shape[:2]
    scale = max(0.4, min(w / 640, h / 480))
    out = (bgr.astype(np.uint16) * 2 // 5).astype(np.uint8)  # 40 %: the text stays legible
    x, y, lh = int(16 * scale), int(32 * scale), int(24 * scale)
    fs = 0.55 * scale

    def put(text: str, color=WHITE, size: float = fs, dy: int = lh) -> None:
        nonlocal y
        cv2.putText(out, text, (x, y), FONT, size, color, max(1, int(scale + 0.5)), cv2.LINE_AA)
        y += dy

    put(f"ar-demo: starting {status.what}", ACCENT, fs * 1.25, int(lh * 1.4))
    bar_w = int(w - 2 * x)
    for name, text, frac in status.model_lines():
        put(f"{name}: {text}", WHITE, fs, int(lh * 0.55))
        cv2.rectangle(out, (x, y), (x + bar_w, y + int(6 * scale)), GREY, 1)
        cv2.rectangle(out, (x, y), (x + int(bar_w * frac), y + int(6 * scale)), ACCENT, -1)
        y += int(lh * 1.1)
    if status.stage != "models":
        put(status.headline(), WHITE)
    put(f"{since_launch():.1f} s since launch", GREY)
    if hint:
        put("The first start compiles the GPU shaders; later starts", GREY, fs * 0.8, int(lh * 0.8))
        put("reuse the driver's cache (Mesa: ~/.cache/mesa_shader_cache).", GREY, fs * 0.8)
    return out


class StartupView:
    """A BGR image over a render target through the frame uploader's texture."""

    def __init__(self, uploader, target_format: str):
        self.uploader, self.device, self.format = uploader, uploader.device, target_format
        self.fence = Fence(self.device)
        self._blit = None

    def prime(self, bgr: np.ndarray) -> None:
        """show() once into a scratch target: the blit pipeline made and compiled."""
        import wgpu

        w, h = self.uploader.size
        target = self.device.create_texture(size=(w, h, 1), format=self.format,
                                            usage=wgpu.TextureUsage.RENDER_ATTACHMENT)  # fmt: skip
        self.show(bgr, target.create_view())
        target.destroy()

    def show(self, bgr: np.ndarray, target_view) -> None:
        """Upload `bgr`, draw it over the target, wait for it."""
        self.uploader.upload(bgr)
        if self._blit is None:
            pipeline = render_pipeline(self.device, "app/frame.wgsl", self.format, FRAME_BINDINGS)
            sampler = self.device.create_sampler(mag_filter="linear", min_filter="linear")
            resources = {"frame": self.uploader.view, "frame_sampler": sampler}
            group = bind_group(self.device, pipeline, FRAME_BINDINGS, resources)
            self._blit = (pipeline, group)
        encoder = self.device.create_command_encoder()
        rp = encoder.begin_render_pass(color_attachments=[{
            "view": target_view, "clear_value": (0, 0, 0, 1), "load_op": "clear",
            "store_op": "store"}])  # fmt: skip
        rp.set_pipeline(self._blit[0])
        rp.set_bind_group(0, self._blit[1])
        rp.draw(3)
        rp.end()
        self.fence.signal(encoder)
        self.device.queue.submit([encoder.finish()])
        self.fence.wait("sleep")
