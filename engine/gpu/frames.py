"""Frames as the texture that pre-process shaders sample, and the one check of a frame.

- `check_image(image)`: a numpy frame the solutions take, else a ValueError naming its
  shape or dtype (empty sides included: wgpu and OpenCV would fail later, unclearly);
- `FrameInput(device, bgr=False)`: `view, (w, h) = frames(frame)`: a numpy image (RGB,
  BGR with `bgr=True`, or RGBA / BGRA) goes up with one write_texture into a texture kept
  between frames of one size; a GPUTexture or GPUTextureView of the caller is used as it
  is (rgba8unorm / bgra8unorm-style formats)
"""

from __future__ import annotations

import numpy as np


def check_image(image) -> np.ndarray:
    """`image` as an array, if it is an 8-bit (H, W, 3 or 4) frame with both sides >= 1."""
    image = np.asarray(image)
    if image.dtype != np.uint8 or image.ndim != 3 or image.shape[2] not in (3, 4):
        raise ValueError(
            f"expected an 8-bit RGB image (H, W, 3) (or RGBA, or BGR with bgr=True), got "
            f"dtype {image.dtype} shape {image.shape}"
        )
    if image.shape[0] < 1 or image.shape[1] < 1:
        raise ValueError(f"the frame is empty: shape {image.shape} (height and width must "
                         f"be at least 1)")  # fmt: skip
    return image


def is_texture(frame) -> bool:
    """Is `frame` a wgpu texture or texture view (not a numpy image)?"""
    if isinstance(frame, np.ndarray):
        return False
    try:
        import wgpu
    except ImportError:
        return False
    return isinstance(frame, wgpu.GPUTexture | wgpu.GPUTextureView)


class FrameInput:
    """Frames as a texture view (see the module docstring); `uploads` counts write_texture."""

    def __init__(self, device, bgr: bool = False):
        self.device, self.bgr = device, bgr
        self.texture = self.view = None
        self.uploads = 0
        self._views: dict[int, tuple] = {}  # the caller's last texture and its view

    def __call__(self, frame) -> tuple[object, tuple[int, int]]:
        """(texture view, (width, height)) for `frame`."""
        import wgpu

        if isinstance(frame, wgpu.GPUTexture):
            key = id(frame)
            if key not in self._views:
                self._views = {key: (frame, frame.create_view())}
            return self._views[key][1], tuple(frame.size[:2])
        if isinstance(frame, wgpu.GPUTextureView):
            return frame, tuple(frame.texture.size[:2])
        return self._upload(check_image(frame))

    def _upload(self, image: np.ndarray):
        import cv2
        import wgpu

        h, w = image.shape[:2]
        fmt = "bgra8unorm" if self.bgr else "rgba8unorm"
        if self.texture is None or tuple(self.texture.size[:2]) != (w, h):
            self.destroy()
            self.texture = self.device.create_texture(
                size=(w, h, 1), format=fmt, label="solution frame",
                usage=wgpu.TextureUsage.TEXTURE_BINDING | wgpu.TextureUsage.COPY_DST,
            )  # fmt: skip
            self.view = self.texture.create_view()
        if image.shape[2] == 3:
            code = cv2.COLOR_BGR2BGRA if self.bgr else cv2.COLOR_RGB2RGBA
            image = cv2.cvtColor(image, code)
        self.device.queue.write_texture(
            {"texture": self.texture}, np.ascontiguousarray(image),
            {"bytes_per_row": w * 4, "rows_per_image": h}, (w, h, 1),
        )  # fmt: skip
        self.uploads += 1
        return self.view, (w, h)

    def destroy(self) -> None:
        if self.texture is not None:
            self.texture.destroy()
        self.texture = self.view = None
        self._views = {}
