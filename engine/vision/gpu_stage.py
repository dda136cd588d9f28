"""Small WebGPU helpers shared by the post-process stages (buffers, bind groups, dispatches);
pipelines come from engine.gpu.compute_pipeline (the context's cache). A stage states its
shader's bindings once, as a tuple of engine.gpu.Binding: its WGSL declarations are
generated from it (engine.gpu.render_shader) and its bind group follows it."""

from __future__ import annotations

import numpy as np


def bind_group(device, pipeline, bindings, resources: dict) -> object:
    """Bind group 0 of `pipeline`, whose shader declares `bindings` (render_shader):
    binding i is resources[bindings[i].name], a buffer, (buffer, offset, size) or a texture
    view / sampler. A binding the pipeline does not use (its auto layout leaves it out) is
    left out of `resources`; a name that is no binding is a ValueError."""
    import wgpu

    unknown = set(resources) - {b.name for b in bindings}
    if unknown:
        names = [b.name for b in bindings]
        raise ValueError(f"resources {sorted(unknown)} are not among the bindings {names}")
    entries = []
    bound = [(i, resources[b.name]) for i, b in enumerate(bindings) if b.name in resources]
    for i, r in bound:
        if isinstance(r, tuple):
            buf, offset, size = r
            r = {"buffer": buf, "offset": offset, "size": size}
        elif isinstance(r, wgpu.GPUBuffer):
            r = {"buffer": r, "offset": 0, "size": r.size}
        entries.append({"binding": i, "resource": r})
    return device.create_bind_group(layout=pipeline.get_bind_group_layout(0), entries=entries)


def zeros_buffer(device, nbytes: int, usage) -> object:
    """A zero-filled buffer of at least 16 bytes (a multiple of 16)."""
    nbytes = max(16, -(-nbytes // 16) * 16)
    return device.create_buffer_with_data(data=np.zeros(nbytes, np.uint8), usage=usage)


def dispatch(encoder, pipeline, group, grid: tuple[int, int, int]) -> None:
    """Record one dispatch in a compute pass of its own."""
    pass_ = encoder.begin_compute_pass()
    pass_.set_pipeline(pipeline)
    pass_.set_bind_group(0, group)
    pass_.dispatch_workgroups(*grid)
    pass_.end()


def wgsl_float(x: float) -> str:
    """A WGSL f32 literal that round-trips `x` (repr of the float32 value)."""
    v = float(np.float32(x))
    s = repr(v)
    if "inf" in s or "nan" in s:
        raise ValueError(f"{x} has no WGSL literal")
    return s if ("." in s or "e" in s) else s + ".0"


class Readback:
    """Ranges of GPU buffers copied into one mappable buffer at the end of an encoder and
    read with one map (one wait), instead of a map per buffer.

        rb = Readback(device, sync="sleep"); rb.add("status", buf, 0, 16)
        rb.encode(encoder); queue.submit(...); data = rb.read()   # {name: bytes}
    """

    def __init__(self, device, sync: str = "sleep"):
        self.device, self.sync = device, sync
        self.items: list[tuple[str, object, int, int, int]] = []  # name, buf, off, size, at
        self.size = 0
        self.buffer = None
        self.maps = 0

    def add(self, name: str, buffer, offset: int = 0, size: int | None = None) -> None:
        size = buffer.size - offset if size is None else size
        self.items.append((name, buffer, offset, size, self.size))
        self.size += -(-size // 16) * 16
        self.buffer = None

    def encode(self, encoder, names=None) -> None:
        """Record the copies (of `names` only, when given) into `encoder`."""
        import wgpu

        if self.buffer is None:
            self.buffer = self.device.create_buffer(
                size=max(16, self.size), usage=wgpu.BufferUsage.MAP_READ | wgpu.BufferUsage.COPY_DST
            )
        for name, buf, off, size, at in self.items:
            if names is None or name in names:
                encoder.copy_buffer_to_buffer(buf, off, self.buffer, at, size)

    def read(self) -> dict[str, bytes]:
        """Wait for the GPU (sync mode `sleep` or `spin`), then every range's bytes."""
        from engine.gpu import wait_mapped

        wait_mapped(self.device, [self.buffer], self.sync)
        data = bytes(self.buffer.read_mapped())
        self.buffer.unmap()
        self.maps += 1
        return {name: data[at : at + size] for name, _, _, size, at in self.items}

    def destroy(self) -> None:
        if self.buffer is not None:
            self.buffer.destroy()
            self.buffer = None


class FrameInput:
    """Frames as a texture the pre-process shaders read: a numpy image (RGB, BGR with
    `bgr=True`, or RGBA) goes up with one write_texture into a texture kept between
    frames; a GPUTexture or GPUTextureView of the caller is used as it is."""

    def __init__(self, device, bgr: bool = False):
        self.device, self.bgr = device, bgr
        self.texture = self.view = None
        self.uploads = 0
        self._views: dict[int, tuple] = {}

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
        return self._upload(np.asarray(frame))

    def _upload(self, image: np.ndarray):
        import cv2
        import wgpu

        if image.dtype != np.uint8 or image.ndim != 3 or image.shape[2] not in (3, 4):
            raise ValueError(
                f"expected an 8-bit RGB image (H, W, 3) (or RGBA / BGR with bgr=True), "
                f"got {image.dtype} {image.shape}"
            )
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


def release_engine(engine) -> None:
    """Destroy an engine's tensor memory (buffers and textures) now rather than at garbage
    collection, and close it where the engine can (its share of shared weights); the
    engine is unusable afterwards."""
    close = getattr(engine, "close", None)
    if close is not None:
        close()
    res = engine.resources
    seen: set[int] = set()
    for view in list(res.buffers.values()) + list(res.textures.values()):
        obj = getattr(view, "buffer", None) or getattr(view, "texture", None)
        if obj is not None and id(obj) not in seen:
            seen.add(id(obj))
            obj.destroy()
