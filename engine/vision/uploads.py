"""output="gpu" on the CPU-decided path (the xnnpack backend; several faces or refined
landmarks on webgpu): the results uploaded into GPU buffers laid out as the GPU-resident
frames leave theirs, so that whatever draws from `solution.gpu` (ar-demo's face
detection, face mesh and segmentation effects) draws the same way.

- `DetectionBuffers`: SsdDecoder's `detections` (DetectionRecord layout, best first),
  `status` (u32 count first) and `record`;
- `MaskBuffer`: a model-resolution mask as a TensorLayout-like PHWC4 buffer (fp32, one
  slice: vec4 y * W + x, lane 0);
- `FaceMeshBuffers`: FaceMeshGpu's points (frame pixels, then normalised at norm_offset),
  status (presence, present, ROI valid, 0), DrawIndirect args and the 96-byte ROI record
  (shaders/engine/roi_rect.wgsl's layout);
- `FaceGeometryBuffers`: FaceGeometryGpu's poses and meshes (gpu_face_geometry.py), every
  face's, up to max_num_faces.
Each `write()` is one queue.write_buffer per buffer; `uploads` counts the bytes;
`destroy()` frees the buffers.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.gpu import zeros_buffer
from engine.vision.detections import DetectionRecord
from engine.vision.face_geometry import NUM_VERTICES
from engine.vision.gpu_face_geometry import POSE_VEC4, FaceGeometryGpu, pose_columns
from engine.vision.roi import Rect, rect_matrix


def _usage():
    import wgpu

    u = wgpu.BufferUsage
    return u.STORAGE | u.COPY_DST | u.COPY_SRC | u.VERTEX | u.INDIRECT


class DetectionBuffers:
    """Detections as SsdDecoder leaves them on the GPU (see the module docstring)."""

    def __init__(self, device, num_keypoints: int, max_detections: int):
        self.device, self.max_detections = device, max_detections
        self.record = DetectionRecord(num_keypoints)
        self.detections = zeros_buffer(device, max_detections * self.record.stride_bytes, _usage())
        self.status = zeros_buffer(device, 16, _usage())
        self.uploads = 0

    def write(self, detections) -> None:
        rec, k = self.record, self.record.num_keypoints
        records = np.zeros((max(1, len(detections)), rec.stride), np.float32)
        for r, d in zip(records, detections[: self.max_detections], strict=False):
            r[0], r[1] = d.score, 1.0
            for at, box, kps in ((rec.frame_px, d.box_px, d.keypoints_px),
                                 (rec.frame_norm, d.box, d.keypoints)):  # fmt: skip
                r[at : at + 4] = box
                r[at + 4 : at + 4 + 2 * k] = np.asarray(kps).reshape(-1)
        status = np.array([len(detections), len(detections), 0, 0], np.uint32)
        self.device.queue.write_buffer(self.detections, 0, records)
        self.device.queue.write_buffer(self.status, 0, status)
        self.uploads += records.nbytes + status.nbytes

    def destroy(self) -> None:
        for buf in (self.detections, self.status):
            buf.destroy()


@dataclass
class MaskBuffer:
    """A [1, H, W, 1] mask where a TensorLayout would be (buffer, offset, size, phwc4)."""

    buffer: object
    phwc4: tuple[int, int, int, int]
    offset: int = 0
    precision: str = "fp32"
    uploads: int = 0

    @classmethod
    def create(cls, device, height: int, width: int) -> MaskBuffer:
        return cls(zeros_buffer(device, height * width * 16, _usage()), (1, height, width, 1))

    @property
    def size(self) -> int:
        return self.phwc4[1] * self.phwc4[2] * 16

    @property
    def shape(self) -> tuple[int, int, int, int]:
        return self.phwc4

    def write(self, device, mask: np.ndarray) -> None:
        data = np.zeros((*mask.shape, 4), np.float32)
        data[..., 0] = mask
        device.queue.write_buffer(self.buffer, 0, data)
        self.uploads += data.nbytes

    def destroy(self) -> None:
        self.buffer.destroy()


class FaceMeshBuffers:
    """One face's points, status, draw args and ROI where FaceMesh's GPU stages put them."""

    def __init__(self, device, num_points: int, num_keypoints: int, max_detections: int):
        self.device, self.num_points = device, num_points
        self.norm_offset = -(-num_points * 16 // 256) * 256
        self.points = zeros_buffer(device, self.norm_offset + num_points * 16, _usage())
        self.status = zeros_buffer(device, 16, _usage())
        self.args = zeros_buffer(device, 16, _usage())
        self.roi = zeros_buffer(device, 96, _usage())
        self.detections = DetectionBuffers(device, num_keypoints, max_detections)
        self.own_uploads = 0

    def write(self, face, detections, frame_size) -> None:
        """`face`: a FaceLandmarks or None; `detections`: the detector's, when it ran."""
        q, n = self.device.queue, self.num_points
        status = np.zeros(4, np.float32)
        args = np.array([6, n if face is not None else 0, 0, 0], np.uint32)
        if face is not None:
            points = np.zeros((self.norm_offset // 16 + n, 4), np.float32)
            points[:n, :3], points[:n, 3] = face.landmarks_px, 1.0
            off = self.norm_offset // 16
            points[off:, :3], points[off:, 3] = face.landmarks, 1.0
            status[:3] = (face.presence, 1.0, 1.0)
            roi = roi_record(face.roi, frame_size, face.tracked)
            q.write_buffer(self.points, 0, points)
            q.write_buffer(self.roi, 0, roi)
            self.own_uploads += points.nbytes + roi.nbytes
        q.write_buffer(self.status, 0, status)
        q.write_buffer(self.args, 0, args)
        self.own_uploads += status.nbytes + args.nbytes
        if detections is not None:
            self.detections.write(detections)

    @property
    def uploads(self) -> int:
        """Bytes written, the detections' included."""
        return self.own_uploads + self.detections.uploads

    def destroy(self) -> None:
        for buf in (self.points, self.status, self.args, self.roi):
            buf.destroy()
        self.detections.destroy()


class FaceGeometryBuffers:
    """Faces' geometry where GpuFaceGeometry puts it (FaceGeometryGpu): face i's pose
    record and mesh in slot i, its valid flag 0 when it has no geometry or no face."""

    def __init__(self, device, max_faces: int):
        self.device, self.max_faces = device, max_faces
        self.poses = zeros_buffer(device, max_faces * POSE_VEC4 * 16, _usage())
        self.mesh = zeros_buffer(device, max_faces * NUM_VERTICES * 16, _usage())
        self.uploads = 0

    @property
    def gpu(self) -> FaceGeometryGpu:
        return FaceGeometryGpu(self.poses, self.mesh, self.max_faces)

    def write(self, faces) -> None:
        """`faces`: FaceLandmarks with their `geometry` (None: that slot is not drawn)."""
        poses = np.zeros((self.max_faces, POSE_VEC4, 4), np.float32)
        mesh = np.zeros((self.max_faces, NUM_VERTICES, 4), np.float32)
        used = 0  # slots up to the last face with a geometry: the mesh bytes written
        for i, face in enumerate(faces[: self.max_faces]):
            if face.geometry is not None:
                poses[i] = pose_columns(face.geometry.pose_transform_matrix)
                mesh[i, :, :3], mesh[i, :, 3] = face.geometry.mesh, 1.0
                used = i + 1
        self.device.queue.write_buffer(self.poses, 0, poses)
        self.uploads += poses.nbytes
        if used:
            self.device.queue.write_buffer(self.mesh, 0, mesh[:used])
            self.uploads += mesh[:used].nbytes

    def destroy(self) -> None:
        for buf in (self.poses, self.mesh):
            buf.destroy()


def roi_record(rect: Rect, frame_size, tracked: bool) -> np.ndarray:
    """shaders/engine/roi_rect.wgsl's 96-byte record of a ROI (6 vec4 f32)."""
    fw, fh = frame_size
    m = rect_matrix(rect, frame_size)
    inv = np.linalg.inv(np.vstack([m, [0.0, 0.0, 1.0]]))[:2]
    rec = np.zeros((6, 4), np.float32)
    rec[0, :3], rec[0, 3] = m[0], float(tracked)
    rec[1, :3], rec[2, :3], rec[3, :3] = m[1], inv[0], inv[1]
    rec[4] = (rect.x_center * fw, rect.y_center * fh, rect.width * fw, rect.height * fh)
    rec[5] = (rect.rotation, 1.0, fw, fh)
    return rec
