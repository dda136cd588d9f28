"""Per-frame results out of the live pipeline: `--results out.jsonl` and the face tally.

- `ResultsWriter(path)`: one JSON object per frame (`record(index, result)`): the
  solution's per-frame fields, declared once beside its result (engine/vision/records.py;
  engine-extract writes them as Parquet too): face detection: every detection's score, box and
  keypoints (pixels and normalised); face mesh: presence, ROI, tracked, 468 landmarks
  (pixels, z on x's scale) and the detections when the detector ran; segmentation: mask
  statistics (mean probability, person fraction at 0.5, the person's bounding box); hands,
  pose, holistic: their landmarks likewise. Reading the results back is one map per frame:
  only with --results.
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


def _json(value, key: str = ""):
    """A record's value as JSON: arrays as lists; floats rounded (pixels to 3 digits, the
    rest to 6: the file stays small and readable)."""
    if isinstance(value, dict):
        return {k: _json(v, k) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_json(v, key) for v in value]
    if isinstance(value, np.ndarray):
        return _json(value.tolist(), key)
    if isinstance(value, float | np.floating):
        return round(float(value), 3 if key.endswith("_px") else 6)
    return value


def result_record(index: int, result) -> dict:
    """A JSON-ready dict of one frame's solution result: the fields of
    engine/vision/records.py, a field that is None (the detector did not run, no
    pose) left out."""
    from engine.vision import frame_record

    return {k: _json(v, k) for k, v in frame_record(index, result).items() if v is not None}


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
