"""Pre-process on the GPU: RGBA frame texture -> a model's PHWC4 input buffer.

- input: an RGBA texture view (e.g. rgba8unorm or bgra8unorm, one write_texture per
  frame), a 2x3 affine `frame_from_tensor` (normalised tensor coords -> frame pixels:
  crop, letterbox, rotation; engine/vision/image_to_tensor.py) and the model's value range
- output: the engine's input buffer, written in place; nothing is read back. The ROI is
  a 32-byte uniform update per frame (or a GPU copy from a post-process stage).
- options: `border` "zero" | "replicate", `quantize` (8-bit rounding as OpenCV's warp),
  `image`: which image of a batched input it writes (engine/vision/roi_model.py)
- semantics: exactly engine.vision.image_to_tensor.image_to_tensor, MediaPipe's convention
  (the ROI's corners are the tensor's corners, pixel k's centre is the coordinate k)

Usage:
    pre = Preprocessor(engine, "input", value_range=(-1.0, 1.0), border="zero")
    pre.set_roi(letterbox_matrix((640, 480), (128, 128)))
    pre.encode(encoder, frame_view); engine.encode(encoder)
"""

from __future__ import annotations

import numpy as np

from engine.gpu import Binding, bind_group, compute_pipeline, render_shader
from engine.precision import precision as precision_of
from engine.vision.image_to_tensor import BORDERS

# preprocess.wgsl's group 0, its declarations generated from these: the frame texture, the
# ROI affine, the model input written
BINDINGS = (
    Binding("in", name="frame", type="texture_2d<f32>"),
    Binding("const", space="uniform", name="roi", type="Roi"),
    Binding("out", name="dst", type="array<vec4<T>>"),
)


class Preprocessor:
    """One model input fed from frame textures."""

    def __init__(self, engine, input_name: str, value_range: tuple[float, float] = (0.0, 1.0),
                 border: str = "replicate", quantize: bool = True, image: int = 0):  # fmt: skip
        import wgpu

        if border not in BORDERS:
            raise ValueError(f"border must be one of {BORDERS}, not {border!r}")
        self.engine, self.layout = engine, engine.tensor_layout(input_name)
        b, h, w, c = self.layout.phwc4
        if c != 3 or not 0 <= image < b:
            raise ValueError(f"input '{input_name}' is {self.layout.shape}: no RGB image "
                             f"#{image} [B,H,W,3] in it")  # fmt: skip
        # image `image` of a batch: rows image*H .. image*H + H of the one slice (PHWC4)
        self.span = h * w * precision_of(self.layout.precision).vec4_bytes
        self.offset = self.layout.offset + image * self.span
        align = engine.ctx.limit("min-storage-buffer-offset-alignment", 256)
        if self.offset % align:
            raise ValueError(f"input '{input_name}': image #{image} starts at byte "
                             f"{self.offset}, not a multiple of the device's {align}")  # fmt: skip
        self.size = (w, h)
        lo, hi = value_range
        source = render_shader("preprocess.wgsl", BINDINGS, precision=engine.precision, w=w,
                               h=h, scale=f"{float(hi - lo)!r}", offset=f"{float(lo)!r}",
                               zero_border="true" if border == "zero" else "false",
                               quantize="true" if quantize else "false")  # fmt: skip
        self.pipeline = compute_pipeline(engine.ctx, source, "preprocess")
        self.roi = engine.ctx.device.create_buffer(
            size=32, usage=wgpu.BufferUsage.UNIFORM | wgpu.BufferUsage.COPY_DST
        )
        self.grid = (-(-w // 8), -(-h // 8), 1)
        self._groups: dict[int, tuple] = {}
        self.set_roi(np.array([[w, 0, 0], [0, h, 0]], np.float64))  # identity until set

    def set_roi(self, frame_from_tensor: np.ndarray) -> None:
        """Set the 2x3 affine: normalised tensor coords -> frame pixels."""
        m = np.zeros((2, 4), np.float32)
        m[:, :3] = np.asarray(frame_from_tensor, np.float64).reshape(2, 3)
        self.engine.ctx.device.queue.write_buffer(self.roi, 0, m)

    def _group(self, view):
        key = id(view)
        if key not in self._groups:
            lay = self.layout
            resources = {"frame": view, "roi": (self.roi, 0, 32),
                         "dst": (lay.buffer, self.offset, self.span)}  # fmt: skip
            group = bind_group(self.engine.ctx.device, self.pipeline, BINDINGS, resources)
            self._groups[key] = (view, group)  # the view kept alive: its id stays unique
        return self._groups[key][1]

    def encode(self, encoder, frame_view) -> None:
        """Record the pre-process dispatch for `frame_view` into `encoder`."""
        pass_ = encoder.begin_compute_pass()
        pass_.set_pipeline(self.pipeline)
        pass_.set_bind_group(0, self._group(frame_view))
        pass_.dispatch_workgroups(*self.grid)
        pass_.end()
