"""Face mesh effect: engine.vision.FaceMesh's 468 landmarks drawn from its vertex buffer,
or effects anchored in 3D on each face.

- input: the frame texture; an SSD face detector and face_landmark (468 x 3 + face flag)
- output: the camera frame with the mesh points (and the rotated crop outline), or with
  glasses on each face, or the face painted
- options: style (`e`): points+roi, points, tesselation, contours, glasses, paint, irises
  (MediaPipe's connection sets, engine/vision/connections.py, drawn from the same buffer;
  hidden by the face flag); irises only with face_landmark_with_attention (478 landmarks:
  FaceMesh's refine_landmarks, on the CPU-decided path, its points uploaded where the draws
  read them);
  glasses and paint (app/effects/face_3d.py: from FaceMesh's face geometry, pose and
  metric mesh, on the GPU; a depth attachment): `object_path` (--object, default
  MediaPipe's glasses), `texture_path` (--texture: the paint's, and the object's when one
  is given; default a pattern made by app/effects/face_assets.py), `max_faces` (--max-faces:
  FaceMesh's max_num_faces; above 1 the CPU-decided path, every face's geometry uploaded:
  the 3D styles draw every face, the points and lines the first)
- usage: `FaceMeshEffect(ctx, [detector_spec, landmark_spec], (640, 480), "bgra8unorm")`

Steps per frame, one encoder, nothing read back: the solution's (detector -> detection ROI;
the ROI from the previous frame's landmarks while the face is tracked, chosen on the GPU;
crop -> face_landmark -> projection to frame pixels), then a 4-byte GPU copy of the point
count (468, or 0 without a face) into this effect's DrawIndirect args.
Draw: `draw_indirect` of round point quads (shaders/app/mesh.wgsl) and the ROI outline;
the 3D styles: the face occluders into depth, then the object or the paint, one instance
per face slot (face_3d.py).
"""

from __future__ import annotations

from pathlib import Path

from app.effects.base import Effect, overlay_params, render_pipeline
from app.effects.face_3d import DEPTH_FORMAT, STYLES, Face3d
from app.effects.face_assets import glasses, load_object, load_texture, paint_pattern
from app.effects.face_detection import indirect_args
from app.effects.skeleton import Skeletons
from app.errors import AppError
from engine.gpu import Binding, bind_group
from engine.vision import (
    FACEMESH_CONTOURS,
    FACEMESH_IRISES,
    FACEMESH_TESSELATION,
    Environment,
    FaceMesh,
)

# style -> the connection sets it draws: (pairs, thickness, RGBA)
CONTOURS = (FACEMESH_CONTOURS, 2.0, (0.35, 1.0, 0.9, 0.95))
LINES = {
    "tesselation": ((FACEMESH_TESSELATION, 1.0, (0.75, 0.75, 0.75, 0.7)),),
    "contours": (CONTOURS,),
    "irises": (CONTOURS, (FACEMESH_IRISES, 2.0, (1.0, 0.45, 0.2, 1.0))),
}

# The group 0 of each overlay shader, declared from these: app/mesh.wgsl reads the overlay
# uniform (the points come as instance vertices); app/roi.wgsl the ROI record (roi_rect.wgsl's
# layout) and the landmark status.
POINTS_BINDINGS = (Binding("const", space="uniform", name="params", type="Params"),)
ROI_BINDINGS = (
    Binding("in", name="roi", type="Roi"),
    Binding("in", name="status", type="array<f32>"),
)


def effect_assets(object_path: str | None, texture_path: str | None):
    """(object Mesh3d, its RGBA texture, the paint's RGBA texture) the options ask for
    (module docstring); AppError when a file cannot be used (app/effects/face_assets.py)."""
    paint = load_texture(Path(texture_path)) if texture_path else paint_pattern()
    if object_path is None:
        obj, texture = glasses()
    else:
        obj = load_object(Path(object_path))
        texture = paint.copy()
        if not texture_path:
            texture[..., 3] = 255  # the pattern on an object: opaque
    return obj, texture, paint


class FaceMeshEffect(Effect):
    name = "face-mesh"
    needs = ("detection", "landmarks")
    # irises last: without the refined model it is left out and the others keep their index
    styles = ("points+roi", "points", "tesselation", "contours", *STYLES, "irises")

    def __init__(self, *args, object_path: str | None = None, texture_path: str | None = None,
                 max_faces: int = 1, **kwargs):  # fmt: skip
        self.max_faces = max_faces
        self.assets = effect_assets(object_path, texture_path)
        self.face_3d = None
        super().__init__(*args, **kwargs)

    @classmethod
    def options_from(cls, args) -> dict:
        return {"object_path": getattr(args, "object", None),
                "texture_path": getattr(args, "texture", None),
                "max_faces": getattr(args, "max_faces", 1)}  # fmt: skip

    @property
    def depth_format(self) -> str | None:
        return DEPTH_FORMAT if self.style_name in STYLES else None

    def build(self) -> None:
        import wgpu

        refine = self.spec("landmarks").refined
        if not refine:  # irises need the refined model's 478 points
            self.styles = tuple(s for s in type(self).styles if s != "irises")
            if self.style >= len(self.styles):
                raise AppError("the irises style draws the refined landmarks: "
                               "face_landmark_with_attention (--refine-landmarks)")  # fmt: skip
        environment = Environment()  # MediaPipe's: the effect renderer draws with it too
        self.solution = FaceMesh(self.spec("detection").graph, self.spec("landmarks").graph,
                                 refine_landmarks=refine, face_geometry=environment,
                                 max_num_faces=self.max_faces, **self.solution_options())  # fmt: skip
        gpu = self.solution.gpu
        dev = self.device
        self.args = indirect_args(dev, 6)
        self.params = dev.create_buffer(
            size=16, usage=wgpu.BufferUsage.UNIFORM | wgpu.BufferUsage.COPY_DST
        )
        self.points_pipeline = render_pipeline(
            dev, "app/mesh.wgsl", self.target_format, POINTS_BINDINGS, blend=True,
            buffers=[{"array_stride": 16, "step_mode": "instance",
                      "attributes": [{"format": "float32x4", "offset": 0, "shader_location": 0}]}],
        )  # fmt: skip
        self.points_group = bind_group(
            dev, self.points_pipeline, POINTS_BINDINGS, {"params": self.params}
        )
        gate = (gpu.status, 1)  # word 1: present (1.0 / 0.0)
        self.mesh_lines = {
            style: [Skeletons(dev, self.target_format, self.frame_size, pairs, gpu.num_points, 1,
                              thickness=thickness, points=gpu.points, gate=gate, color=color)
                    for pairs, thickness, color in sets]
            for style, sets in LINES.items() if style in self.styles
        }  # fmt: skip
        self.roi_pipeline = render_pipeline(
            dev, "app/roi.wgsl", self.target_format, ROI_BINDINGS, blend=True
        )
        resources = {"roi": gpu.roi, "status": gpu.status}
        self.roi_group = bind_group(dev, self.roi_pipeline, ROI_BINDINGS, resources)
        if self.face_3d is not None:  # a rebuild: the new solution's geometry buffers
            self.face_3d.destroy()
        self.face_3d = Face3d(dev, self.target_format, self.frame_size, gpu.geometry,
                              environment, *self.assets)  # fmt: skip
        self.on_style()

    def on_style(self) -> None:
        self.device.queue.write_buffer(self.params, 0, overlay_params(self.frame_size, self.style))

    @property
    def face_flag(self):
        return (self.solution.gpu.status, 4, "float32")  # present: 1.0 / 0.0

    def own_steps(self, frame_view):
        def count(enc) -> None:  # instance count = 468 (478) points, or 0 without a face
            enc.copy_buffer_to_buffer(self.solution.gpu.args, 4, self.args, 4, 4)

        return [("postprocess", count)]

    def draw(self, render_pass, frame_view) -> None:
        if self.style_name in STYLES:  # its pass has a depth attachment: its own pipelines
            self.face_3d.draw(render_pass, self.style_name, frame_view)
            return
        self.draw_frame(render_pass, frame_view)
        if self.style_name in self.mesh_lines:
            for lines in self.mesh_lines[self.style_name]:
                lines.draw(render_pass, dots=False)
            return
        if self.style_name == "points+roi":
            render_pass.set_pipeline(self.roi_pipeline)
            render_pass.set_bind_group(0, self.roi_group)
            render_pass.draw(24)
        gpu = self.solution.gpu
        render_pass.set_pipeline(self.points_pipeline)
        render_pass.set_bind_group(0, self.points_group)
        render_pass.set_vertex_buffer(0, gpu.points, 0, gpu.num_points * 16)
        render_pass.draw_indirect(self.args, 0)

    def close(self) -> None:
        super().close()
        for sets in self.mesh_lines.values():
            for lines in sets:
                lines.destroy()
        if self.face_3d is not None:
            self.face_3d.destroy()


EFFECT = FaceMeshEffect
