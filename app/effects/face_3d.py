"""Face effects anchored in 3D: a 3D object placed by each face's pose, or a texture painted
on each face through the canonical UVs, hidden behind the face where it should be.

- input: the face geometry on the GPU (engine.vision FaceGeometryGpu: each face's pose
  and metric mesh, FaceMesh(face_geometry=True, output="gpu")), the environment (the
  virtual camera), the object (app/effects/face_assets.Mesh3d) and the textures (RGBA)
- output: draws into the frame's render pass, which has a depth attachment
  (DEPTH_FORMAT: the effect's `depth_format`, app/pipeline.py makes it)
- semantics: MediaPipe's effect renderer (modules/face_geometry/libs/effect_renderer.cc,
  face_effect_gpu.pbtxt) for every face slot at once (instances; a slot without a face
  draws nothing): (1) the frame; (2) the occluder: each face mesh, moved 1 mm away from
  the camera, into the depth buffer only; (3) the effect: the object (glasses) with the
  pose, or the face mesh itself with the paint texture, depth-tested, alpha-blended; no
  face culling, as there. The projection is the environment's perspective matrix
  (OpenGL clip space) with z mapped to WebGPU's [0, 1] and y flipped back (`projection`);
  textures are mipmapped (MediaPipe's glGenerateMipmap), sampled linearly
- usage: `fx = Face3d(device, "bgra8unorm", (640, 480), gpu.geometry, Environment(),
  obj, obj_texture, paint_texture)`; in the pass: `fx.draw(rp, "glasses", frame_view)`
"""

from __future__ import annotations

import math

import numpy as np

from app.effects.base import FRAME_BINDINGS
from app.effects.face_assets import Mesh3d
from engine.gpu import Binding, bind_group, render_shader
from engine.vision import canonical_face

DEPTH_FORMAT = "depth24plus"
STYLES = ("glasses", "paint")  # the face mesh effect's styles drawn here
# shaders/app/face_effect.wgsl's group 0, declared from these
BINDINGS = (
    Binding("const", space="uniform", name="params", type="Params"),
    Binding("in", name="poses", type="array<vec4<f32>>"),
    Binding("in", name="mesh", type="array<vec4<f32>>"),
    Binding("in", name="uv", type="array<vec2<f32>>"),
    Binding("in", name="effect_texture", type="texture_2d<f32>"),
    Binding("in", name="effect_sampler", type="sampler"),
)
BLEND = {  # MediaPipe's OPAQUE mode: glBlendFunc(GL_SRC_ALPHA, GL_ONE_MINUS_SRC_ALPHA)
    "color": {"src_factor": "src-alpha", "dst_factor": "one-minus-src-alpha", "operation": "add"},
    "alpha": {"src_factor": "src-alpha", "dst_factor": "one-minus-src-alpha", "operation": "add"},
}
OBJECT_VERTEX = {  # Mesh3d VERTEX_PT: x y z u v
    "array_stride": 20, "step_mode": "vertex",
    "attributes": [{"format": "float32x3", "offset": 0, "shader_location": 0},
                   {"format": "float32x2", "offset": 12, "shader_location": 1}],
}  # fmt: skip


def projection(environment, frame_size: tuple[int, int]) -> np.ndarray:
    """(4, 4) camera space (cm) -> WebGPU clip space: the environment's perspective matrix
    (MediaPipe's, OpenGL's clip space) with z from [-w, w] to [0, w], and y negated: GL's
    NDC y = -1 is the first row of the target's memory, WebGPU's is +1, and MediaPipe's
    top-left origin already flipped y for GL."""
    fix = np.array([[1, 0, 0, 0], [0, -1, 0, 0], [0, 0, 0.5, 0.5], [0, 0, 0, 1]], np.float64)
    return fix @ environment.perspective_matrix(frame_size)


def upload_texture(device, rgba: np.ndarray):
    """An RGBA uint8 image as a mipmapped rgba8unorm texture (levels halved on the CPU)."""
    import cv2
    import wgpu

    h, w = rgba.shape[:2]
    levels = 1 + int(math.log2(max(w, h)))
    texture = device.create_texture(
        size=(w, h, 1), format="rgba8unorm", mip_level_count=levels,
        usage=wgpu.TextureUsage.TEXTURE_BINDING | wgpu.TextureUsage.COPY_DST,
    )  # fmt: skip
    image = np.ascontiguousarray(rgba)
    for level in range(levels):
        ih, iw = image.shape[:2]
        device.queue.write_texture({"texture": texture, "mip_level": level}, image,
                                   {"bytes_per_row": iw * 4, "rows_per_image": ih}, (iw, ih, 1))  # fmt: skip
        image = cv2.resize(image, (max(1, iw // 2), max(1, ih // 2)), interpolation=cv2.INTER_AREA)
    return texture


def _buffer(device, data: np.ndarray, usage):
    return device.create_buffer_with_data(data=np.ascontiguousarray(data), usage=usage)


class Face3d:
    """The 3D face effects' GPU objects and draws (see the module docstring)."""

    def __init__(self, device, target_format: str, frame_size: tuple[int, int], geometry,
                 environment, obj: Mesh3d, object_texture: np.ndarray,
                 paint_texture: np.ndarray):  # fmt: skip
        import wgpu

        self.device, self.faces = device, geometry.max_faces
        usage = wgpu.BufferUsage
        canon = canonical_face()
        proj = projection(environment, frame_size).T.astype(np.float32)  # column-major
        self.params = _buffer(device, proj, usage.UNIFORM)
        self.uv = _buffer(device, canon.uv.astype(np.float32), usage.STORAGE)
        self.face_index = _buffer(device, canon.triangles.astype(np.uint32), usage.INDEX)
        self.face_count = canon.triangles.size
        self.object_vertices = _buffer(device, obj.vertices.astype(np.float32), usage.VERTEX)
        self.object_index = _buffer(device, obj.triangles.astype(np.uint32), usage.INDEX)
        self.object_count = obj.triangles.size
        self.textures = [upload_texture(device, object_texture),
                         upload_texture(device, paint_texture)]  # fmt: skip
        sampler = device.create_sampler(mag_filter="linear", min_filter="linear",
                                        mipmap_filter="linear")  # fmt: skip
        code = render_shader("app/face_effect.wgsl", BINDINGS)
        module = device.create_shader_module(code=code, label="app/face_effect.wgsl")
        self.occluder = self._pipeline(module, "vs_occluder", "fs_occluder", target_format,
                                       color=False)  # fmt: skip
        self.paint = self._pipeline(module, "vs_paint", "fs_texture", target_format)
        self.object = self._pipeline(module, "vs_object", "fs_texture", target_format,
                                     buffers=[OBJECT_VERTEX])  # fmt: skip
        shared = {"params": self.params, "poses": geometry.poses}
        self.occluder_group = bind_group(device, self.occluder, BINDINGS,
                                         {**shared, "mesh": geometry.mesh})  # fmt: skip
        self.paint_group = bind_group(device, self.paint, BINDINGS, {
            **shared, "mesh": geometry.mesh, "uv": self.uv,
            "effect_texture": self.textures[1].create_view(), "effect_sampler": sampler,
        })  # fmt: skip
        self.object_group = bind_group(device, self.object, BINDINGS, {
            **shared, "effect_texture": self.textures[0].create_view(),
            "effect_sampler": sampler,
        })  # fmt: skip
        frame = device.create_shader_module(code=render_shader("app/frame.wgsl", FRAME_BINDINGS))
        self.blit = self._pipeline(frame, "vs", "fs", target_format, blend=False,
                                   depth_write=False, compare="always")  # fmt: skip
        self.frame_sampler = device.create_sampler(mag_filter="linear", min_filter="linear")
        self._blit_group = None  # (frame view, bind group)

    def _pipeline(self, module, vs: str, fs: str, target_format: str, *, buffers=(),
                  color: bool = True, blend: bool = True, depth_write: bool = True,
                  compare: str = "less"):  # fmt: skip
        import wgpu

        target = {"format": target_format,
                  "write_mask": wgpu.ColorWrite.ALL if color else 0}  # fmt: skip
        if blend and color:
            target["blend"] = BLEND
        return self.device.create_render_pipeline(
            layout="auto",
            vertex={"module": module, "entry_point": vs, "buffers": list(buffers)},
            primitive={"topology": "triangle-list", "cull_mode": "none"},
            depth_stencil={"format": DEPTH_FORMAT, "depth_write_enabled": depth_write,
                           "depth_compare": compare},
            fragment={"module": module, "entry_point": fs, "targets": [target]},
            label=f"face_effect {vs}",
        )  # fmt: skip

    def draw(self, render_pass, style: str, frame_view) -> None:
        """The frame (None: already in the target), the occluders, then the effect."""
        if frame_view is not None:
            if self._blit_group is None or self._blit_group[0] is not frame_view:
                group = bind_group(self.device, self.blit, FRAME_BINDINGS,
                                   {"frame": frame_view, "frame_sampler": self.frame_sampler})  # fmt: skip
                self._blit_group = (frame_view, group)
            render_pass.set_pipeline(self.blit)
            render_pass.set_bind_group(0, self._blit_group[1])
            render_pass.draw(3)
        render_pass.set_pipeline(self.occluder)
        render_pass.set_bind_group(0, self.occluder_group)
        render_pass.set_index_buffer(self.face_index, "uint32")
        render_pass.draw_indexed(self.face_count, self.faces)
        if style == "paint":
            render_pass.set_pipeline(self.paint)
            render_pass.set_bind_group(0, self.paint_group)
            render_pass.draw_indexed(self.face_count, self.faces)
            return
        render_pass.set_pipeline(self.object)
        render_pass.set_bind_group(0, self.object_group)
        render_pass.set_vertex_buffer(0, self.object_vertices)
        render_pass.set_index_buffer(self.object_index, "uint32")
        render_pass.draw_indexed(self.object_count, self.faces)

    def destroy(self) -> None:
        for buf in (self.params, self.uv, self.face_index, self.object_vertices,
                    self.object_index):  # fmt: skip
            buf.destroy()
        for texture in self.textures:
            texture.destroy()
