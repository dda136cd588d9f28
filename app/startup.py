"""The window's start-up screen: the camera (or first video) frame, dimmed, with the build's
progress written over it on the CPU.

- input: a BGR frame, a BuildStatus (app/build.py)
- output: a new BGR frame of the same size: "starting <effect>", a line and a bar per model
  (planning, creating pipelines k/n, compiling shaders k/n, ready), the seconds elapsed
- why on the CPU: it must show from the first second, before any of the effect's shaders
  (or imgui's) exist; the only GPU work is the frame blit (one small render pipeline)
- usage: `window_view.show(startup_screen(frame.bgr, status), target)`
"""

from __future__ import annotations

import cv2
import numpy as np

from app.build import since_launch

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
