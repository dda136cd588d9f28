"""Per-frame results out of the live pipeline: `--results out.jsonl` and the face tally.

- `ResultsWriter(path)`: one JSON object per frame (`record(index, result)`): frame index,
  timestamp; face detection: every detection's score, box and 6 keypoints (pixels and
  normalised); face mesh: presence, ROI, tracked, 468 landmarks (pixels, z on x's scale)
  and the detections when the detector ran; segmentation: mask statistics (mean
  probability, person fraction at 0.5, the person's bounding box). Reading the results
  back is one map per frame: only with --results.
- `FaceTally`: frames with a face without a per-frame readback: each frame's GPU encoder
  copies the 4-byte face flag (detection count or face-mesh presence) into a slot of a
  GPU buffer, read back when full (every 4096 frames) and at the end (`summary()`).
- usage: `w = ResultsWriter("out/r.jsonl"); w.write(rec.index, effect.read_results())`
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

SLOTS = 4096  # frames per tally readback


def _list(a: np.ndarray, digits: int = 3) -> list:
    return np.round(np.asarray(a, np.float64), digits).tolist()


def _detections(dets) -> list[dict]:
    return [{"score": round(float(d.score), 5), "box_px": _list(d.box_px),
             "box": _list(d.box, 6), "keypoints_px": _list(d.keypoints_px),
             "keypoints": _list(d.keypoints, 6)} for d in dets]  # fmt: skip


def result_record(index: int, result) -> dict:
    """A JSON-ready dict of one frame's solution result."""
    from engine.vision import FaceDetectorResult, FaceMeshResult, SegmentationResult

    out: dict = {"frame": index, "image_size": list(result.image_size)}
    if isinstance(result, FaceDetectorResult):
        out["faces"] = len(result.detections)
        out["detections"] = _detections(result.detections)
    elif isinstance(result, FaceMeshResult):
        out["faces"] = len(result.faces)
        out["detector_ran"] = result.detections is not None
        if result.detections is not None:
            out["detections"] = _detections(result.detections)
        out["meshes"] = [{"presence": round(f.presence, 5), "tracked": f.tracked,
                          "roi": {k: round(float(v), 6) for k, v in vars(f.roi).items()},
                          "landmarks_px": _list(f.landmarks_px)} for f in result.faces]  # fmt: skip
    elif isinstance(result, SegmentationResult):
        person = result.mask > 0.5
        ys, xs = np.nonzero(person)
        out["mask"] = {
            "mean": round(float(result.mask.mean()), 5),
            "person_fraction": round(float(person.mean()), 5),
            "person_box_px": [int(xs.min()), int(ys.min()), int(xs.max()) + 1,
                              int(ys.max()) + 1] if xs.size else None,
        }  # fmt: skip
    return out


class ResultsWriter:
    """JSON lines, flushed per frame (a killed run keeps what it wrote)."""

    def __init__(self, path: str | Path):
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path, self.frames = path, 0
        self._file = open(path, "w", encoding="utf-8", buffering=1)  # noqa: SIM115 (kept open)

    def write(self, index: int, result) -> None:
        self._file.write(json.dumps(result_record(index, result)) + "\n")
        self.frames += 1

    def close(self) -> None:
        self._file.close()


class FaceTally:
    """Counts frames with a face from a 4-byte flag on the GPU (see the module docstring).

    `flag`: (buffer, byte offset, dtype) of the effect's face flag: u32 count or f32 0/1."""

    def __init__(self, device, flag: tuple[object, int, str]):
        import wgpu

        self.device, (self.src, self.offset, self.dtype) = device, flag
        self.slots = device.create_buffer(
            size=SLOTS * 4, usage=wgpu.BufferUsage.COPY_DST | wgpu.BufferUsage.COPY_SRC
        )
        self.used = 0
        self.frames = self.with_face = self.readbacks = 0

    def record(self, encoder) -> None:
        """Copy this frame's flag into the next slot (a GPU copy: nothing read back)."""
        if self.used == SLOTS:
            self._drain()
        encoder.copy_buffer_to_buffer(self.src, self.offset, self.slots, 4 * self.used, 4)
        self.used += 1

    def _drain(self) -> None:
        if self.used:
            raw = self.device.queue.read_buffer(self.slots, 0, 4 * self.used)
            flags = np.frombuffer(raw, np.dtype(self.dtype))
            self.frames += int(flags.size)
            self.with_face += int(np.count_nonzero(flags > 0))
            self.readbacks += 1
        self.used = 0

    def summary(self) -> dict:
        """{"frames", "frames_with_face", "frames_without_face"} so far (reads the rest)."""
        self._drain()
        return {"frames": self.frames, "frames_with_face": self.with_face,
                "frames_without_face": self.frames - self.with_face}  # fmt: skip
