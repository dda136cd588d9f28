"""The face effects' assets: the 3D object (--object) and the textures (--texture), read and
checked before anything compiles.

- input: an OBJ file (Wavefront: `v x y z`, `vt u v`, `f a/at b/bt c/ct ...`, polygons
  fanned into triangles) or a MediaPipe Mesh3d in proto text (`vertex_type: VERTEX_PT`,
  `vertex_buffer` x y z u v, `index_buffer`); an image file (PNG, JPEG, ...: 8 bits a
  channel, grey, RGB or RGBA)
- output: `Mesh3d` (vertices (N, 5) float32 x y z u v, triangles (M, 3) uint32); textures
  as RGBA uint8 (H, W, 4)
- semantics: an object sits in the canonical face model's frame (centimetres, y up, z out
  of the face, MediaPipe's canonical_face_model.obj), as MediaPipe's glasses do; texture
  coordinates have v = 0 at the image's top row (Mesh3d's, as MediaPipe's renderer
  samples them), so an OBJ's vt (v = 0 at the bottom, OpenGL's) is flipped; an OBJ
  without any vt gets the texture seen from the front (u, v from x, y over its box). Every
  problem is an AppError naming the option, the file and what is wrong (one line, exit 2)
- defaults: MediaPipe's example glasses and their texture (app/assets/face_effect/,
  Apache-2.0); the paint's pattern is made here (`paint_pattern`)
- usage: `load_object(Path("hat.obj"))`; `load_texture(Path("paint.png"))`
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path

import numpy as np

from app.errors import AppError

GLASSES = "glasses.pbtxt"  # MediaPipe's face_effect example, with glasses.png
OBJECT_SUFFIXES = (".obj", ".pbtxt")
# WebGPU's guaranteed maxTextureDimension2D: a larger image may not fit the adapter
MAX_TEXTURE = 8192


@dataclass(frozen=True)
class Mesh3d:
    """A textured triangle mesh (MediaPipe's Mesh3d, VERTEX_PT)."""

    vertices: np.ndarray  # (N, 5) float32: x y z (cm, canonical face frame), u v
    triangles: np.ndarray  # (M, 3) uint32 vertex indices


def asset(name: str):
    """A file of app/assets/face_effect (a package resource: it ships in the wheel)."""
    return files("app") / "assets" / "face_effect" / name


def glasses() -> tuple[Mesh3d, np.ndarray]:
    """MediaPipe's example glasses and their RGBA texture."""
    mesh = parse_mesh3d(asset(GLASSES).read_text(), f"app/assets/face_effect/{GLASSES}")
    return mesh, decode_texture(asset("glasses.png").read_bytes(), "glasses.png")


def _read_bytes(option: str, path: Path) -> bytes:
    if not path.exists():
        raise AppError(f"{option} {path}: no such file")
    if path.is_dir():
        raise AppError(f"{option} {path}: is a directory; give a file")
    try:
        return path.read_bytes()
    except OSError as exc:
        raise AppError(f"{option} {path}: cannot be read ({exc.strerror})") from None


def load_object(path: Path, option: str = "--object") -> Mesh3d:
    """The 3D object of `path` (.obj, or a Mesh3d .pbtxt); AppError on any problem."""
    path = Path(path)
    data = _read_bytes(option, path)
    where = f"{option} {path}"
    if path.suffix.lower() not in OBJECT_SUFFIXES:
        raise AppError(f"{where}: not an OBJ file (the object is a Wavefront .obj, or a "
                       f"MediaPipe Mesh3d .pbtxt)")  # fmt: skip
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise AppError(f"{where}: not a text file, so no OBJ (a binary format? export it "
                       f"as Wavefront .obj)") from None  # fmt: skip
    mesh = parse_mesh3d(text, where) if path.suffix.lower() == ".pbtxt" else parse_obj(text, where)
    if not np.isfinite(mesh.vertices).all():
        raise AppError(f"{where}: a vertex is not a finite number")
    return mesh


def parse_obj(text: str, where: str) -> Mesh3d:
    """Wavefront OBJ -> Mesh3d: each distinct (v, vt) pair one vertex; polygons fanned."""
    positions: list[list[float]] = []
    uvs: list[list[float]] = []
    keys: dict[tuple[int, int], int] = {}
    triangles: list[tuple[int, int, int]] = []
    for number, line in enumerate(text.splitlines(), 1):
        parts = line.split("#", 1)[0].split()
        if not parts:
            continue
        kind, values = parts[0], parts[1:]
        try:
            if kind == "v":
                positions.append([float(v) for v in values[:3]])
                if len(values) < 3:
                    raise ValueError
            elif kind == "vt":
                uvs.append([float(v) for v in values[:2]] + [0.0] * (2 - len(values[:2])))
                if not values:
                    raise ValueError
            elif kind == "f":
                corners = [_corner(c, len(positions), len(uvs)) for c in values]
                if len(corners) >= 3:
                    ids = [keys.setdefault(c, len(keys)) for c in corners]
                    triangles += [(ids[0], ids[k], ids[k + 1]) for k in range(1, len(ids) - 1)]
        except ValueError as exc:
            detail = f" ({exc})" if str(exc) else ""
            raise AppError(f"{where}: line {number}: cannot read {line.strip()[:40]!r}"
                           f"{detail}") from None  # fmt: skip
    if not triangles:
        raise AppError(f"{where}: no triangles (no 'f' line with 3 or more vertices)")
    vertices = np.zeros((len(keys), 5), np.float32)
    for (v, t), i in keys.items():
        vertices[i, :3] = positions[v]
        if t >= 0:  # OBJ's v = 0 is the image's bottom row; Mesh3d's is its top
            vertices[i, 3:] = (uvs[t][0], 1.0 - uvs[t][1])
    if all(t < 0 for _, t in keys):  # no texture coordinates: the texture seen from the front
        lo, hi = vertices[:, :2].min(axis=0), vertices[:, :2].max(axis=0)
        span = np.where(hi > lo, hi - lo, 1.0)
        vertices[:, 3] = (vertices[:, 0] - lo[0]) / span[0]
        vertices[:, 4] = (hi[1] - vertices[:, 1]) / span[1]
    return Mesh3d(vertices, np.array(triangles, np.uint32))


def _corner(token: str, n_positions: int, n_uvs: int) -> tuple[int, int]:
    """`v`, `v/vt`, `v//vn` or `v/vt/vn` (1-based, negative from the end) -> (v, vt or -1)."""
    fields = token.split("/")

    def index(field: str, count: int, what: str) -> int:
        i = int(field)
        i = i - 1 if i > 0 else count + i
        if not 0 <= i < count:
            raise ValueError(f"{what} {field} of {count}")
        return i

    v = index(fields[0], n_positions, "vertex")
    t = index(fields[1], n_uvs, "texture coordinate") if len(fields) > 1 and fields[1] else -1
    return v, t


def parse_mesh3d(text: str, where: str) -> Mesh3d:
    """MediaPipe's Mesh3d proto text (VERTEX_PT, TRIANGLE) -> Mesh3d."""
    text = re.sub(r"#.*", "", text)
    if "VERTEX_PT" not in text:
        raise AppError(f"{where}: not a Mesh3d with vertex_type VERTEX_PT")
    try:
        values = np.array(re.findall(r"vertex_buffer:\s*(\S+)", text), np.float32)
        indices = np.array(re.findall(r"index_buffer:\s*(\S+)", text), np.int64)
    except ValueError as exc:
        raise AppError(f"{where}: cannot read a value ({exc})") from None
    if values.size % 5:
        raise AppError(f"{where}: {values.size} vertex_buffer values, not 5 a vertex")
    if indices.size < 3:
        raise AppError(f"{where}: no triangles (index_buffer has {indices.size} values)")
    if indices.size % 3 or indices.min() < 0 or indices.max() >= values.size // 5:
        raise AppError(f"{where}: the index_buffer is not triangles of its "
                       f"{values.size // 5} vertices")  # fmt: skip
    return Mesh3d(values.reshape(-1, 5), indices.reshape(-1, 3).astype(np.uint32))


def load_texture(path: Path, option: str = "--texture") -> np.ndarray:
    """An image file as RGBA uint8; AppError when it cannot be read or is no 8-bit image."""
    path = Path(path)
    return decode_texture(_read_bytes(option, path), f"{option} {path}")


def decode_texture(data: bytes, where: str) -> np.ndarray:
    import cv2

    image = None
    if data:
        image = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_UNCHANGED)
    if image is None:
        raise AppError(f"{where}: not an image OpenCV can read (give a PNG or JPEG)")
    if image.dtype != np.uint8:
        raise AppError(f"{where}: a {image.dtype} image; the texture takes 8 bits a channel "
                       f"(save it as an 8-bit PNG or JPEG)")  # fmt: skip
    channels = 1 if image.ndim == 2 else image.shape[2]
    if channels not in (1, 3, 4):
        raise AppError(f"{where}: {channels} channels; the texture takes grey, RGB or RGBA")
    if max(image.shape[:2]) > MAX_TEXTURE:
        raise AppError(f"{where}: {image.shape[1]}x{image.shape[0]} is larger than a GPU "
                       f"texture is sure to be ({MAX_TEXTURE} pixels a side)")  # fmt: skip
    code = {1: cv2.COLOR_GRAY2RGBA, 3: cv2.COLOR_BGR2RGBA, 4: cv2.COLOR_BGRA2RGBA}[channels]
    return np.ascontiguousarray(cv2.cvtColor(image, code))


def paint_pattern(size: int = 512) -> np.ndarray:
    """The paint style's default texture, RGBA (size, size): a translucent rainbow across
    the face (hue from u) under a darker grid every 1/16 of the UV square, so that the
    paint shows how the canonical UVs follow the face. Alpha > 0 everywhere: the whole
    face mesh is painted."""
    u = (np.arange(size) + 0.5) / size
    uu, vv = np.meshgrid(u, u)
    hue = 2.0 * math.pi * uu
    rgb = np.stack([np.cos(hue - k * 2.0 * math.pi / 3.0) for k in range(3)], axis=-1)
    rgb = 0.55 + 0.45 * rgb  # pastel: every channel in [0.1, 1]
    cells = 16
    line = np.minimum(np.abs(uu * cells - np.round(uu * cells)),
                      np.abs(vv * cells - np.round(vv * cells)))  # fmt: skip
    grid = line < 0.06  # in cells: about 2 texels wide at 512
    rgb[grid] *= 0.25
    alpha = np.where(grid, 0.8, 0.35)
    out = np.concatenate([rgb, alpha[..., None]], axis=-1)
    return np.round(out * 255.0).astype(np.uint8)
