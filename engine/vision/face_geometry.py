"""Face geometry: MediaPipe's metric face mesh and head pose from the face mesh landmarks.

- input: one face's normalised landmarks (468 or 478, 3: x / W, y / H, z / W, as FaceMesh
  gives them; the first 468 are used, as MediaPipe's FaceGeometryFromLandmarksGraph splits
  them off), the frame size (W, H), an `Environment` (default: the one MediaPipe's
  FaceLandmarker makes, top-left origin, 63 degrees vertical FOV, near 1 cm, far 100 m)
- output: `FaceGeometry`: `mesh` (468, 3), the metric face in centimetres in the canonical
  model's frame; `pose_transform_matrix` (4, 4), canonical model -> camera space (uniform
  scale, rotation, translation in cm; column vectors); `vertex_buffer` (468, 5) and
  `index_buffer` (898, 3), MediaPipe's Mesh3d (VERTEX_PT: x, y, z, u, v; triangles);
  `environment`. None for a face MediaPipe drops (landmarks within 1e-3 of their mean)
- semantics: MediaPipe 0.10.14's FaceGeometryPipelineCalculator (geometry_pipeline.cc,
  procrustes_solver.cc), in float64: the landmarks projected onto the near plane, the
  weighted orthogonal Procrustes solve against the canonical face's 33 basis landmarks
  twice for the scale, the landmarks unprojected with it into metric camera space
  (right-handed, the camera looking down -z), the pose solved on them, the mesh = the
  metric landmarks brought back by the inverse pose. The pose times the mesh, projected by
  `Environment.perspective_matrix`, lands on the landmarks' x, y
- data: the canonical face and its basis weights, vendored from MediaPipe
  (engine/vision/data/face_geometry/, Apache-2.0; its README says which commit)
- usage:
    geometry = face_geometry(face.landmarks, (640, 480))
    nose_tip_cm = geometry.pose_transform_matrix @ [*geometry.mesh[1], 1.0]
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from functools import cache
from importlib.resources import files

import numpy as np

METADATA = "geometry_pipeline_metadata_landmarks.pbtxt"
NUM_VERTICES = 468  # the canonical mesh; refined landmarks' irises (468-477) are left out
# geometry_pipeline.cc IsScreenLandmarkListTooCompact: a face whose landmarks all lie within
# this of their mean (normalised x, y) is dropped
TOO_COMPACT = 1e-3
EPS = 1e-9  # procrustes_solver.cc kAbsoluteErrorEps: its checks' margin
ORIGINS = ("top_left", "bottom_left")  # environment.proto OriginPointLocation


@dataclass(frozen=True)
class Environment:
    """The virtual camera the metric space is seen through (environment.proto). The
    default is MediaPipe's own (face_geometry_from_landmarks_graph.cc, face_effect_gpu)."""

    vertical_fov_degrees: float = 63.0
    near: float = 1.0  # cm
    far: float = 10000.0  # cm
    origin: str = "top_left"  # where the frame's (0, 0) is: "top_left" or "bottom_left"

    def __post_init__(self):  # validation_utils.cc ValidatePerspectiveCamera
        if self.origin not in ORIGINS:
            raise ValueError(f"origin must be one of {ORIGINS}, not {self.origin!r}")
        if not (self.near > EPS and self.far > self.near + EPS):
            raise ValueError(f"need 0 < near < far, not near={self.near}, far={self.far}")
        if not EPS < self.vertical_fov_degrees < 180.0 - EPS:
            raise ValueError(f"vertical_fov_degrees must be in (0, 180), not "
                             f"{self.vertical_fov_degrees}")  # fmt: skip

    def near_plane(self, frame_size: tuple[int, int]) -> tuple[float, float]:
        """The near plane's (width, height) in cm at this frame's aspect ratio
        (geometry_pipeline.cc PerspectiveCameraFrustum)."""
        w, h = frame_size
        height = 2.0 * self.near * math.tan(0.5 * math.radians(self.vertical_fov_degrees))
        return w * height / h, height

    def perspective_matrix(self, frame_size: tuple[int, int]) -> np.ndarray:
        """(4, 4), camera space -> OpenGL clip space, as MediaPipe's effect renderer makes it
        (effect_renderer.cc CreatePerspectiveMatrix, aspect W / H). With the top-left origin
        it flips y, so the normalised frame coordinates are (ndc + 1) / 2 on both axes."""
        w, h = frame_size
        f = 1.0 / math.tan(math.radians(self.vertical_fov_degrees) / 2.0)
        denom = 1.0 / (self.near - self.far)
        m = np.zeros((4, 4))
        m[0, 0] = f / (w / h)
        m[1, 1] = -f if self.origin == "top_left" else f
        m[2, 2] = (self.near + self.far) * denom
        m[2, 3] = 2.0 * self.far * self.near * denom
        m[3, 2] = -1.0
        return m


DEFAULT_ENVIRONMENT = Environment()


@dataclass(frozen=True)
class CanonicalFace:
    """MediaPipe's canonical face model and Procrustes basis (the vendored metadata)."""

    positions: np.ndarray  # (468, 3) cm, right-handed: +y up, +z out of the face
    uv: np.ndarray  # (468, 2) texture coordinates
    triangles: np.ndarray  # (898, 3) vertex indices
    basis: np.ndarray  # (33,) the landmarks the pose is solved on
    weights: np.ndarray  # (33,) their weights


@cache
def canonical_face() -> CanonicalFace:
    """The vendored geometry_pipeline_metadata_landmarks.pbtxt, read once. Its values are
    rounded to float32 first, as MediaPipe's protos hold them."""
    text = (files("engine.vision") / "data" / "face_geometry" / METADATA).read_text()
    text = re.sub(r"#.*", "", text)  # the licence header
    f32 = np.float32
    vertices = np.array(re.findall(r"vertex_buffer:\s*(\S+)", text), f32).astype(np.float64)
    indices = np.array(re.findall(r"index_buffer:\s*(\d+)", text), np.int64)
    basis = re.findall(r"landmark_id:\s*(\d+)\s+weight:\s*(\S+)", text)
    if "vertex_type: VERTEX_PT" not in text or vertices.size != NUM_VERTICES * 5:
        raise ValueError(f"{METADATA}: expected {NUM_VERTICES} VERTEX_PT vertices")
    vertices = vertices.reshape(NUM_VERTICES, 5)
    ids = np.array([int(i) for i, _ in basis], np.int64)
    weights = np.array([w for _, w in basis], f32).astype(np.float64)
    return CanonicalFace(vertices[:, :3], vertices[:, 3:], indices.reshape(-1, 3), ids, weights)


@dataclass(frozen=True)
class FaceGeometry:
    """One face's geometry (face_geometry.proto FaceGeometry); see the module docstring."""

    mesh: np.ndarray  # (468, 3) metric landmarks, cm, in the canonical face's frame
    pose_transform_matrix: np.ndarray  # (4, 4) canonical -> camera space, column vectors
    environment: Environment = DEFAULT_ENVIRONMENT

    @property
    def vertex_buffer(self) -> np.ndarray:
        """(468, 5): MediaPipe's Mesh3d VERTEX_PT rows, x y z (this mesh), u v (canonical)."""
        return np.concatenate([self.mesh, canonical_face().uv], axis=1)

    @property
    def index_buffer(self) -> np.ndarray:
        """(898, 3): the canonical mesh's triangles, as MediaPipe's Mesh3d holds them."""
        return canonical_face().triangles

    @property
    def camera_mesh(self) -> np.ndarray:
        """(468, 3): the mesh in camera space (the pose applied), cm."""
        m = self.pose_transform_matrix
        return self.mesh @ m[:3, :3].T + m[:3, 3]


def solve_weighted_orthogonal(source: np.ndarray, target: np.ndarray,
                              weights: np.ndarray) -> np.ndarray:  # fmt: skip
    """The (4, 4) similarity (uniform scale, rotation, translation) that maps the `source`
    points (N, 3) onto `target` (N, 3) with the least weighted squared error, no reflection
    (procrustes_solver.cc, after Akca 2003, section 2.4):

    1. both point sets scaled by sqrt(weight); the source centred on its weighted mean;
    2. rotation = U V^T from the SVD of target_w^T centred_source_w, U's last column
       negated where det(U) det(V^T) < 0;
    3. scale = <R centred_source_w, target_w> / <centred_source_w, source_w>;
    4. translation = the weighted mean of target - scale R source.

    A degenerate input fails as MediaPipe's checks do: ValueError naming the check."""
    src, dst = np.asarray(source, np.float64), np.asarray(target, np.float64)
    w = np.asarray(weights, np.float64)
    if src.ndim != 2 or src.shape[1] != 3 or src.shape != dst.shape or len(src) == 0:
        raise ValueError(f"need two equal (N, 3) point sets, not {src.shape} and {dst.shape}")
    if w.shape != (len(src),) or (w < 0).any():
        raise ValueError(f"need {len(src)} non-negative weights, not shape {w.shape}")
    total = w.sum()
    if not total > EPS:
        raise ValueError("the total point weight is too small")
    sw = np.sqrt(w)[:, None]
    ws, wt = src * sw, dst * sw
    centre = (ws * sw).sum(axis=0) / total
    cws = ws - sw * centre
    design = wt.T @ cws
    if not np.linalg.norm(design) > EPS:
        raise ValueError("the design matrix's norm is too small (the points are degenerate)")
    u, _, vt = np.linalg.svd(design)
    if np.linalg.det(u) * np.linalg.det(vt) < 0:
        u[:, 2] *= -1.0
    rotation = u @ vt
    numerator, denominator = float(((cws @ rotation.T) * wt).sum()), float((cws * ws).sum())
    if not denominator > EPS:
        raise ValueError("the scale's denominator is too small (the source is degenerate)")
    if not numerator / denominator > EPS:
        raise ValueError("the scale is too small")
    rs = numerator / denominator * rotation
    out = np.eye(4)
    out[:3, :3] = rs
    out[:3, 3] = ((wt - ws @ rs.T) * sw).sum(axis=0) / total
    return out


def face_geometry(landmarks: np.ndarray, frame_size: tuple[int, int],
                  environment: Environment = DEFAULT_ENVIRONMENT) -> FaceGeometry | None:  # fmt: skip
    """One face's geometry from its normalised landmarks (module docstring); None when
    MediaPipe drops the face (too compact)."""
    lm = np.asarray(landmarks, np.float64)
    if lm.ndim != 2 or lm.shape[1] != 3 or len(lm) < NUM_VERTICES:
        raise ValueError(f"need ({NUM_VERTICES} or more, 3) face landmarks, not {lm.shape}")
    w, h = int(frame_size[0]), int(frame_size[1])
    if w <= 0 or h <= 0:
        raise ValueError(f"the frame size must be positive, not {frame_size}")
    lm = lm[:NUM_VERTICES]
    if np.sqrt(((lm[:, :2] - lm[:, :2].mean(axis=0)) ** 2).sum(axis=1).max()) <= TOO_COMPACT:
        return None
    canon = canonical_face()
    source = canon.positions[canon.basis]  # the zero-weight landmarks change nothing

    def solve(points: np.ndarray) -> np.ndarray:
        return solve_weighted_orthogonal(source, points[canon.basis], canon.weights)

    def scale_of(points: np.ndarray) -> float:  # EstimateScale: the solve's first column
        return float(np.linalg.norm(solve(points)[:3, 0]))

    near = environment.near
    near_w, near_h = environment.near_plane((w, h))
    # ProjectXY: onto the near plane (x, y in cm there; z on x's scale), y up
    screen = lm.copy()
    if environment.origin == "top_left":
        screen[:, 1] = 1.0 - screen[:, 1]
    screen *= (near_w, near_h, near_w)
    screen[:, :2] -= (0.5 * near_w, 0.5 * near_h)
    depth_offset = screen[:, 2].mean()

    def metric(scale: float) -> np.ndarray:
        """MoveAndRescaleZ, UnprojectXY, ChangeHandedness: camera space at this scale."""
        z = (screen[:, 2] - depth_offset + near) / scale
        return np.stack([screen[:, 0] * z / near, screen[:, 1] * z / near, -z], axis=1)

    # the Z of the landmarks is relative: the first scale comes from the projected points
    first = scale_of(screen * (1.0, 1.0, -1.0))
    second = scale_of(metric(first))
    points = metric(first * second)
    pose = solve(points)
    inverse = np.linalg.inv(pose)
    mesh = points @ inverse[:3, :3].T + inverse[:3, 3]
    return FaceGeometry(mesh, pose, environment)
