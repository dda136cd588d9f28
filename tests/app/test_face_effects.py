"""The face effects anchored in 3D (--style glasses / paint: app/effects/face_3d.py) against
a numpy rendering of the same geometry: each rendered frame is compared with the input
frame, and the pixels it changed with the face mesh and the glasses projected and
depth-tested in numpy (pose and metric mesh read back from the GPU buffers the effect drew
from; MediaPipe's perspective). On webgpu's one-face GPU frame (the geometry computed on
the GPU, nothing read back) and on the CPU-decided path with two faces (xnnpack, the
geometry uploaded per face); then ar-demo headless with the HUD, its counts and stats."""

from __future__ import annotations

import json
import subprocess
import sys

import cv2
import numpy as np
import pytest

from app.effects import effect_info
from app.effects.face_assets import glasses, load_object
from app.models import load_model
from app.pipeline import FramePipeline
from app.sources import open_source
from engine.vision import Environment, canonical_face
from engine.vision.gpu_face_geometry import POSE_VEC4
from tests.helpers.files import ROOT, model_file
from tests.helpers.gpu import gpu_context
from tests.helpers.media import people_clip, sample_clip

CTX = gpu_context()
STYLES = effect_info("face-mesh").styles
CHANGED = 12  # a pixel the effect drew on: some channel moved by more than this (8-bit)
MARGIN = 2  # pixels: rasterisation and anti-aliasing-free edges may differ by one or two
OCCLUDER_SHIFT_CM = 0.1  # effect_renderer.cc: the occluder 1 mm away from the camera


def render(style: str, clip, indices, backend: str = "webgpu", **effect_options) -> list:
    """(input BGR, rendered BGR, [(pose, mesh) per face], landmarks_px per face) for the
    frames at `indices` (the frames before them are read, not rendered)."""
    import wgpu

    specs = [load_model(model_file(m)) for m in ("face_detection_short_range", "face_landmark")]
    source = open_source(str(clip), max(indices) + 1)
    p = FramePipeline(CTX, specs, "face-mesh", source.size, "bgra8unorm", backend=backend,
                      style=STYLES.index(style), effect_options=effect_options)  # fmt: skip
    target = CTX.device.create_texture(
        size=(*source.size, 1), format="bgra8unorm",
        usage=wgpu.TextureUsage.RENDER_ATTACHMENT | wgpu.TextureUsage.COPY_SRC,
    )  # fmt: skip
    out = []
    try:
        assert p.effect.depth_format is not None  # the 3D styles' pass has a depth buffer
        while len(out) < len(indices):
            frame = source.read()
            if frame.index not in indices:
                continue
            rec = p.process(frame, target.create_view(), readback_texture=target)
            geometry = read_geometry(p.effect.solution.gpu.geometry)
            faces = p.effect.read_results().faces
            out.append((frame.bgr, rec.image, geometry, [f.landmarks_px for f in faces]))
    finally:
        p.effect.close()
        target.destroy()
    return out


def read_geometry(gpu) -> list:
    """Every valid slot's (pose (4, 4), mesh (468, 3)), float64."""
    q = CTX.device.queue
    poses = np.frombuffer(q.read_buffer(gpu.poses), np.float32).reshape(-1, POSE_VEC4, 4)
    mesh = np.frombuffer(q.read_buffer(gpu.mesh), np.float32).reshape(-1, 468, 4)
    return [(p[:4].T.astype(np.float64), m[:, :3].astype(np.float64))
            for p, m in zip(poses[: gpu.max_faces], mesh, strict=False) if p[4, 0] > 0.5]  # fmt: skip


def project(pose: np.ndarray, points: np.ndarray, size) -> tuple[np.ndarray, np.ndarray]:
    """Frame pixels (N, 2) and depth (NDC z, N) of canonical-frame points posed by `pose`
    and seen through MediaPipe's camera (its top-left origin: (ndc + 1) / 2 from the top)."""
    camera = points @ pose[:3, :3].T + pose[:3, 3]
    clip = np.c_[camera, np.ones(len(camera))] @ Environment().perspective_matrix(size).T
    ndc = clip[:, :3] / clip[:, 3:]
    return (ndc[:, :2] + 1.0) / 2.0 * size, ndc[:, 2]


def rasterize(px: np.ndarray, depth: np.ndarray, triangles: np.ndarray, size) -> np.ndarray:
    """The nearest depth at each pixel centre covered by a triangle (inf: none); NDC depth
    is affine in screen space. No culling, as the renderer."""
    w, h = size
    zbuf = np.full((h, w), np.inf)
    for tri in triangles:
        p, z = px[tri], depth[tri]
        x0, y0 = np.maximum(np.floor(p.min(axis=0) - 0.5).astype(int), 0)
        x1, y1 = np.minimum(np.ceil(p.max(axis=0)).astype(int), (w - 1, h - 1))
        if x1 < x0 or y1 < y0:
            continue
        gx, gy = np.meshgrid(np.arange(x0, x1 + 1) + 0.5, np.arange(y0, y1 + 1) + 0.5)
        area = (p[1, 0] - p[0, 0]) * (p[2, 1] - p[0, 1]) - (p[2, 0] - p[0, 0]) * (p[1, 1] - p[0, 1])
        if abs(area) < 1e-12:
            continue
        b = [((p[(k + 2) % 3, 0] - p[(k + 1) % 3, 0]) * (gy - p[(k + 1) % 3, 1])
              - (p[(k + 2) % 3, 1] - p[(k + 1) % 3, 1]) * (gx - p[(k + 1) % 3, 0])) / area
             for k in range(3)]  # fmt: skip
        inside = (b[0] >= 0) & (b[1] >= 0) & (b[2] >= 0)
        zz = b[0] * z[0] + b[1] * z[1] + b[2] * z[2]
        region = zbuf[y0 : y1 + 1, x0 : x1 + 1]
        np.minimum(region, np.where(inside, zz, np.inf), out=region)
    return zbuf


def grow(mask: np.ndarray, px: int) -> np.ndarray:
    return cv2.dilate(mask.astype(np.uint8), np.ones((2 * px + 1, 2 * px + 1), np.uint8)) > 0


def shrink(mask: np.ndarray, px: int) -> np.ndarray:
    return cv2.erode(mask.astype(np.uint8), np.ones((2 * px + 1, 2 * px + 1), np.uint8)) > 0


def changed(before: np.ndarray, after: np.ndarray) -> np.ndarray:
    return np.abs(after.astype(int) - before.astype(int)).max(axis=2) > CHANGED


def check_projection(frames, size) -> None:
    """The metric mesh posed by the matrix lands within 1 px of the screen landmarks."""
    for _, _, geometry, landmarks in frames:
        assert len(geometry) == len(landmarks) >= 1
        for (pose, mesh), lm in zip(geometry, landmarks, strict=True):
            px, _ = project(pose, mesh, size)
            assert np.abs(px - lm[:468, :2]).max() < 1.0


def check_object(before, after, geometry, size, obj=None) -> dict:
    """The pixels the object (default the glasses) changed are the object projected in numpy
    where no face (the occluder) is in front of it: none elsewhere, none where the face
    hides it (the glasses' far temple seen through the head), nearly all of the rest (the
    glasses' frame is opaque)."""
    obj = glasses()[0] if obj is None else obj
    canon = canonical_face()
    drawn = changed(before, after)
    cover = np.zeros(drawn.shape, bool)
    behind = np.zeros(drawn.shape, bool)
    for pose, mesh in geometry:
        gz = rasterize(*project(pose, obj.vertices[:, :3].astype(np.float64), size),
                       obj.triangles, size)  # fmt: skip
        occluder = pose.copy()
        occluder[2, 3] -= OCCLUDER_SHIFT_CM
        fz = rasterize(*project(occluder, mesh, size), canon.triangles, size)
        cover |= np.isfinite(gz)
        behind |= np.isfinite(gz) & (gz >= fz)
    visible = cover & ~behind
    hidden = behind & ~grow(visible, MARGIN)  # clear of every visible edge
    counts = {"drawn": int(drawn.sum()), "outside": int((drawn & ~grow(cover, MARGIN)).sum()),
              "visible": int(visible.sum()), "visible_drawn": int((drawn & visible).sum()),
              "hidden": int(hidden.sum()), "hidden_drawn": int((drawn & hidden).sum())}  # fmt: skip
    assert counts["drawn"] > 300, counts
    assert counts["outside"] <= 0.005 * counts["drawn"], counts
    assert counts["visible_drawn"] >= 0.9 * counts["visible"], counts
    # something is behind the face: the glasses' far temple (23-87 pixels on these frames)
    assert counts["hidden"] > 10, counts
    assert counts["hidden_drawn"] == 0, counts
    return counts


def check_paint(before, after, geometry, size) -> dict:
    """The painted pixels are the face meshes projected in numpy: none outside, nearly all
    inside (the default pattern has alpha > 0 everywhere)."""
    canon = canonical_face()
    drawn = changed(before, after)
    cover = np.zeros(drawn.shape, bool)
    for pose, mesh in geometry:
        cover |= np.isfinite(rasterize(*project(pose, mesh, size), canon.triangles, size))
    inner = shrink(cover, MARGIN)
    counts = {"drawn": int(drawn.sum()), "outside": int((drawn & ~grow(cover, MARGIN)).sum()),
              "face": int(inner.sum()), "face_drawn": int((drawn & inner).sum())}  # fmt: skip
    assert counts["face"] > 2000, counts
    assert counts["outside"] <= 0.005 * counts["drawn"], counts
    assert counts["face_drawn"] >= 0.9 * counts["face"], counts
    return counts


def test_glasses_on_the_gpu_frame_match_the_numpy_projection():
    frames = render("glasses", sample_clip(), [0, 1, 2])
    check_projection(frames, (640, 480))
    for before, after, geometry, _ in frames:
        check_object(before, after, geometry, (640, 480))


def test_paint_on_the_gpu_frame_matches_the_numpy_projection():
    frames = render("paint", sample_clip(), [0, 1])
    check_projection(frames, (640, 480))
    for before, after, geometry, _ in frames:
        check_paint(before, after, geometry, (640, 480))


@pytest.mark.parametrize("style", ["glasses", "paint"])
def test_two_faces_on_the_cpu_decided_path(style):
    """The people clip's two men (frame 199): --max-faces 2 on xnnpack, each face's numpy
    geometry uploaded in its slot, both drawn."""
    pytest.importorskip("ai_edge_litert.interpreter")
    frames = render(style, people_clip(), [199], backend="xnnpack", max_faces=2)
    ((before, after, geometry, landmarks),) = frames
    assert len(geometry) == len(landmarks) == 2
    check_projection(frames, (640, 480))
    (check_object if style == "glasses" else check_paint)(before, after, geometry, (640, 480))


def test_an_obj_in_front_of_the_face_and_one_behind_it(tmp_path):
    """--object: a plate 2 cm in front of the nose tip (drawn) and one behind the head
    (hidden by the occluder), no texture coordinates: the pattern seen from the front."""
    path = tmp_path / "plates.obj"
    path.write_text("# front plate, then back plate (cm, canonical face frame)\n"
                    "v -2 -1 9.5\nv 2 -1 9.5\nv 2 1 9.5\nv -2 1 9.5\n"
                    "v -3 -3 -4\nv 3 -3 -4\nv 3 3 -4\nv -3 3 -4\n"
                    "f 1 2 3 4\nf 5 6 7 8\n")  # fmt: skip
    frames = render("glasses", sample_clip(), [0], object_path=str(path))
    ((before, after, geometry, _),) = frames
    counts = check_object(before, after, geometry, (640, 480), load_object(path))
    assert counts["hidden"] > 1000  # the back plate, wholly behind the face


def test_obj_polygons_are_fanned_and_vt_flipped(tmp_path):
    path = tmp_path / "quad.obj"
    path.write_text("v -1 -1 0\nv 1 -1 0\nv 1 1 0\nv -1 1 0\nvt 0 0\nvt 1 0\nvt 1 1\n"
                    "vt 0 1\nvn 0 0 1\nf 1/1/1 2/2/1 3/3/1 -1/-1/1\n")  # fmt: skip
    mesh = load_object(path)
    assert mesh.triangles.tolist() == [[0, 1, 2], [0, 2, 3]]
    np.testing.assert_array_equal(mesh.vertices[:, 3:], [[0, 1], [1, 1], [1, 0], [0, 0]])


def test_headless_glasses_with_the_hud_read_nothing_back(tmp_path):
    """ar-demo headless on webgpu: the depth pass, then the HUD in a pass of its own; one
    submit a frame and no read of results (the face geometry stays on the GPU)."""
    stats = tmp_path / "stats.json"
    out = tmp_path / "glasses.mp4"
    cmd = [sys.executable, "-m", "app.cli", "--solution", "face-mesh", "--style", "glasses",
           "--backend", "webgpu", "--input", str(sample_clip()), "--headless", "--hud",
           "--frames", "4", "--output", str(out), "--stats", str(stats), "--no-progress"]  # fmt: skip
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-2000:]
    s = json.loads(stats.read_text())
    assert s["frames"] == 4 and s["style"] == "glasses" and s["faces"]["frames_with_face"] == 4
    t = s["transfers"]
    assert t["result_readbacks"] == 0 and t["tensor_readbacks"] == 0
    assert [per[:2] for per in t["per_frame"]] == [[1, 0]]
    assert out.stat().st_size > 0
