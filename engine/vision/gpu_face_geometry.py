"""Face geometry on the GPU: the metric face mesh and the head pose, from landmarks that
stay in a GPU buffer, for whatever draws from it (ar-demo's face effects).

- input: a buffer of normalised landmarks (vec4 x / W, y / H, z / W, 1; FaceMesh's points
  at `norm_offset`, LandmarkProjector's layout) and a present flag per face (f32 > 0.5;
  FaceMesh's status word 1), the frame size (`configure`), an `Environment`
- output, on the GPU (`gpu`, a FaceGeometryGpu): `poses`, per face 5 vec4: the 4x4
  pose_transform_matrix's columns (canonical face -> camera space, cm; WGSL's
  mat4x4<f32>(p[0], p[1], p[2], p[3])), then (valid 1 / 0, first scale, second scale,
  their product); `mesh`, per face 468 vec4 (x, y, z, 1): the metric mesh in cm in the
  canonical face's frame, written only when valid
- semantics: engine/vision/face_geometry.py's pipeline (MediaPipe's
  FaceGeometryPipelineCalculator) in float32, one work group per face
  (shaders/vision/face_geometry.wgsl); the rotation of each Procrustes solve by Horn's
  quaternion method (a Jacobi eigen-solve of the 4x4 symmetric matrix of the
  cross-covariance: the best proper rotation, as the SVD with MediaPipe's sign fix). A
  face is valid when present, not too compact and every solve is non-degenerate, the
  numpy function's conditions for returning a geometry
- usage: `geo = GpuFaceGeometry(ctx, points, status, points_start=off // 16)`;
  `geo.configure((640, 480))`; per frame `geo.encode(encoder)` after the landmarks;
  `geo.read()` (tests, debugging) -> [(pose (4, 4), mesh (468, 3)) or None per face]
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.gpu import (
    Binding,
    bind_group,
    compute_pipeline,
    dispatch,
    render_shader,
    wgsl_float,
    zeros_buffer,
)
from engine.vision.face_geometry import (
    DEFAULT_ENVIRONMENT,
    NUM_VERTICES,
    Environment,
    canonical_face,
)

POSE_VEC4 = 5  # the matrix's 4 columns, then the flags
BINDINGS = (
    Binding("in", name="points", type="array<vec4<f32>>"),
    Binding("in", name="status", type="array<f32>"),
    Binding("const", space="uniform", name="params", type="Params"),
    Binding("out", name="poses", type="array<vec4<f32>>"),
    Binding("out", name="mesh", type="array<vec4<f32>>"),
)


@dataclass(frozen=True)
class FaceGeometryGpu:
    """Where faces' geometry lives on the GPU (the module docstring's layout): up to
    `max_faces` faces, face i's pose at vec4 5 i of `poses`, its mesh at vec4 468 i of
    `mesh`; a face whose valid flag (vec4 5 i + 4, x) is 0 has none this frame."""

    poses: object
    mesh: object
    max_faces: int


def pose_columns(matrix: np.ndarray, valid: bool = True) -> np.ndarray:
    """(5, 4) float32: a 4x4 pose as the `poses` record (columns, then the flags)."""
    out = np.zeros((POSE_VEC4, 4), np.float32)
    out[:4] = np.asarray(matrix, np.float64).T
    out[4, 0] = float(valid)
    return out


def _vec3s(points: np.ndarray) -> str:
    return ", ".join(
        f"vec3<f32>({wgsl_float(x)}, {wgsl_float(y)}, {wgsl_float(z)})" for x, y, z in points
    )


def shader_constants(environment: Environment) -> dict:
    """The template's constants: the canonical basis centred on its weighted mean (float64,
    then float32), the weights, the environment's near distance and origin."""
    canon = canonical_face()
    source, w = canon.positions[canon.basis], canon.weights
    centre = (source * w[:, None]).sum(axis=0) / w.sum()
    centred = source - centre
    return {
        "basis": ", ".join(f"{int(i)}u" for i in canon.basis),
        "weights": ", ".join(wgsl_float(v) for v in w),
        "source": _vec3s(centred),
        "centre": ", ".join(wgsl_float(v) for v in centre),
        "total_weight": wgsl_float(w.sum()),
        "source_norm2": wgsl_float((w[:, None] * centred**2).sum()),
        "near": wgsl_float(environment.near),
        "top_left": "true" if environment.origin == "top_left" else "false",
    }


class GpuFaceGeometry:
    """The geometry compute pass (see the module docstring). `points_start` / `points_stride`:
    vec4 index of face 0's first landmark and from one face to the next; `status_start` /
    `status_stride`: f32 index of face 0's present flag and the step."""

    def __init__(self, ctx, points, status, *, faces: int = 1, points_start: int = 0,
                 points_stride: int = NUM_VERTICES, status_start: int = 1,
                 status_stride: int = 4, environment: Environment = DEFAULT_ENVIRONMENT):  # fmt: skip
        import wgpu

        self.ctx, self.device, self.environment = ctx, ctx.device, environment
        self.faces = faces
        usage = wgpu.BufferUsage
        store = usage.STORAGE | usage.COPY_SRC | usage.COPY_DST
        self.poses = zeros_buffer(self.device, faces * POSE_VEC4 * 16, store)
        self.mesh = zeros_buffer(self.device, faces * NUM_VERTICES * 16, store)
        self.params = zeros_buffer(self.device, 32, usage.UNIFORM | usage.COPY_DST)
        layout = np.array([points_start, points_stride, status_start, status_stride], np.uint32)
        self.device.queue.write_buffer(self.params, 16, layout)
        source = render_shader("vision/face_geometry.wgsl", BINDINGS,
                               **shader_constants(environment))  # fmt: skip
        self.pipeline = compute_pipeline(ctx, source, "face_geometry")
        self.group = bind_group(self.device, self.pipeline, BINDINGS, {
            "points": points, "status": status, "params": self.params, "poses": self.poses,
            "mesh": self.mesh,
        })  # fmt: skip
        self.frame_size: tuple[int, int] | None = None

    @property
    def gpu(self) -> FaceGeometryGpu:
        return FaceGeometryGpu(self.poses, self.mesh, self.faces)

    def configure(self, frame_size: tuple[int, int]) -> None:
        """The near plane at this frame's aspect ratio (a no-op when unchanged)."""
        size = (int(frame_size[0]), int(frame_size[1]))
        if size != self.frame_size:
            self.frame_size = size
            near = np.array([*self.environment.near_plane(size), 0.0, 0.0], np.float32)
            self.device.queue.write_buffer(self.params, 0, near)

    def encode(self, encoder) -> None:
        """One dispatch: a work group per face."""
        dispatch(encoder, self.pipeline, self.group, (self.faces, 1, 1))

    def read(self) -> list[tuple[np.ndarray, np.ndarray] | None]:
        """Each face's (pose (4, 4), mesh (468, 3)) as float64, None where not valid; reads
        the buffers back (blocks: tests and debugging)."""
        q = self.device.queue
        poses = np.frombuffer(q.read_buffer(self.poses), np.float32)
        poses = poses.reshape(-1, POSE_VEC4, 4)[: self.faces].astype(np.float64)
        mesh = np.frombuffer(q.read_buffer(self.mesh), np.float32)
        mesh = mesh.reshape(-1, NUM_VERTICES, 4)[: self.faces, :, :3].astype(np.float64)
        return [(p[:4].T.copy(), m) if p[4, 0] > 0.5 else None
                for p, m in zip(poses, mesh, strict=True)]  # fmt: skip

    def destroy(self) -> None:
        for buf in (self.poses, self.mesh, self.params):
            buf.destroy()
