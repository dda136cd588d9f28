"""FrameInput's CPU twin: any frame a solution takes, as the RGB image the CPU stages read.

- input: a numpy image (RGB (H, W, 3) uint8, BGR with `bgr=True`, or RGBA / BGRA), or a
  GPUTexture / GPUTextureView of the caller (rgba8unorm / bgra8unorm and their -srgb forms)
- output: (RGB (H, W, 3) uint8, contiguous; (width, height))
- semantics: an RGB image is used as it is; BGR and 4-channel images are converted
  (cv2.cvtColor); a texture is copied into a mappable buffer and read back (one submit and
  one wait on its device: `readbacks` counts them): the model inputs of the xnnpack backend
  come from the adapter's frame that way when the caller holds only a texture (ar-demo)
- usage: `rgb, size = CpuFrames(device, bgr=True)(frame)`
"""

from __future__ import annotations

import numpy as np


class CpuFrames:
    """Frames as numpy RGB (see the module docstring); `device` only for textures."""

    def __init__(self, device=None, bgr: bool = False):
        self.device, self.bgr = device, bgr
        self.readbacks = 0
        self._buffer = None

    def __call__(self, frame) -> tuple[np.ndarray, tuple[int, int]]:
        import cv2

        if _is_texture(frame):
            image = self._read_texture(frame)
            return image, (image.shape[1], image.shape[0])
        image = np.asarray(frame)
        if image.dtype != np.uint8 or image.ndim != 3 or image.shape[2] not in (3, 4):
            raise ValueError(
                f"expected an 8-bit RGB image (H, W, 3) (or RGBA / BGR with bgr=True), "
                f"got {image.dtype} {image.shape}"
            )
        if image.shape[2] == 4:
            image = cv2.cvtColor(image, cv2.COLOR_BGRA2RGB if self.bgr else cv2.COLOR_RGBA2RGB)
        elif self.bgr:
            image = cv2.cvtColor(image, cv2.COLOR_BGR2RGB)
        image = np.ascontiguousarray(image)
        return image, (image.shape[1], image.shape[0])

    def _read_texture(self, frame) -> np.ndarray:
        """The texture's pixels as RGB uint8 (a BGRA texture's swapped)."""
        import cv2
        import wgpu

        if self.device is None:
            raise ValueError("a GPU texture frame needs the solution's context (context=...)")
        texture = frame.texture if isinstance(frame, wgpu.GPUTextureView) else frame
        fmt = str(texture.format)
        if not fmt.startswith(("rgba8unorm", "bgra8unorm")):
            raise ValueError(f"texture format {fmt}: expected rgba8unorm or bgra8unorm")
        w, h = texture.size[0], texture.size[1]
        row = -(-w * 4 // 256) * 256  # copies align rows to 256 bytes
        if self._buffer is None or self._buffer.size < row * h:
            self.destroy()
            usage = wgpu.BufferUsage.MAP_READ | wgpu.BufferUsage.COPY_DST
            self._buffer = self.device.create_buffer(size=row * h, usage=usage)
        encoder = self.device.create_command_encoder()
        encoder.copy_texture_to_buffer(
            {"texture": texture}, {"buffer": self._buffer, "bytes_per_row": row,
                                   "rows_per_image": h}, (w, h, 1),
        )  # fmt: skip
        self.device.queue.submit([encoder.finish()])
        self._buffer.map_sync(wgpu.MapMode.READ, 0, row * h)
        data = np.frombuffer(self._buffer.read_mapped(0, row * h), np.uint8)
        rgba = data.reshape(h, row)[:, : w * 4].reshape(h, w, 4)
        code = cv2.COLOR_BGRA2RGB if fmt.startswith("bgra") else cv2.COLOR_RGBA2RGB
        image = cv2.cvtColor(rgba, code)  # a copy: the mapping is released next
        self._buffer.unmap()
        self.readbacks += 1
        return image

    def destroy(self) -> None:
        if self._buffer is not None:
            self._buffer.destroy()
            self._buffer = None


def _is_texture(frame) -> bool:
    if isinstance(frame, np.ndarray):
        return False
    try:
        import wgpu
    except ImportError:
        return False
    return isinstance(frame, wgpu.GPUTexture | wgpu.GPUTextureView)
