"""The detector stage: an SSD detector on the whole frame (or a region of it) -> detections.

- declaration: `DetectorModel` (the manifest's model, its input convention: value range and
  border, as the solution's MediaPipe graph sets them); the SSD options come from the
  manifest's entry for the file (`ssd_spec`), BlazeFace's otherwise
- input: a frame, as the backend's frames give it; the region it sees: the whole frame
  letterboxed (`configure(frame_size)`) or any crop (`set_transform(frame_from_tensor,
  frame_size)`, Holistic's face inside the pose's face region)
- output: `detect(frame)` -> tuple of `Detection` (score, box and keypoints, in frame
  pixels and normalised), best first, at most `max_detections`
- semantics: MediaPipe's detection graphs (face_detection.pbtxt, palm_detection_cpu,
  pose_detection_cpu): ImageToTensor (engine/vision/image_to_tensor.py), the model, SSD
  anchor decode, sigmoid scores >= min_score, weighted NMS (engine/vision/ssd.py on the
  CPU; engine/vision/detections.py on the GPU), boxes mapped back through the crop
- implementations, side by side in engine/vision/backends: `GpuDetector` (webgpu: records
  into an encoder, its records stay on the GPU for GPU-resident use) and `CpuDetector`
  (xnnpack: numpy and OpenCV around LiteRT); a backend's `detector()` makes the right one
- usage: `det = backend.detector(PALM, min_score=0.5); det.configure((640, 480));
  det.detect(frame)`
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from engine.vision.results import Detection
from engine.vision.ssd_spec import SsdSpec


@dataclass(frozen=True)
class DetectorModel:
    """A solution's SSD detector: the manifest model it runs by default and how the frame
    becomes its input (ImageToTensorCalculator's value range and border)."""

    model: str
    value_range: tuple[float, float]
    border: str  # "zero" | "replicate"


def input_name(graph) -> str:
    """The name of a one-image model's input."""
    return graph.tensors[graph.inputs[0]].name


def ssd_outputs(graph) -> tuple[str, str]:
    """(boxes, scores) among an SSD detector's outputs: [1, N, 4 + 2K] and [1, N, 1]."""
    outs = {graph.tensors[t].name: tuple(graph.tensors[t].shape) for t in graph.outputs}
    boxes = [n for n, s in outs.items() if len(s) == 3 and s[2] >= 4 and (s[2] - 4) % 2 == 0]
    scores = [n for n, s in outs.items() if len(s) == 3 and s[2] == 1]
    if not boxes or not scores:
        raise ValueError(f"{graph.name}: not an SSD detector: outputs {outs}")
    return boxes[0], scores[0]


def manifest_entry(graph):
    """The manifest's entry for the file a graph was read from (by file name), or None."""
    from engine.catalog.manifest import load_manifest

    name = Path(graph.name).name
    return next((e for e in load_manifest().models if e.file == name), None)


def ssd_spec(graph, min_score: float | None) -> SsdSpec:
    """The manifest's SSD options for the graph's file, else BlazeFace's at its input size;
    `min_score` replaces their score threshold (None: the graph's own, the manifest's)."""
    entry = manifest_entry(graph)
    if entry is not None and entry.postprocess.get("kind") == "ssd":
        spec = SsdSpec.from_manifest(entry.postprocess)
    else:
        _, h, w, _ = graph.tensors[graph.inputs[0]].shape
        spec = SsdSpec(input_size=(int(w), int(h)))
    return spec if min_score is None else replace(spec, min_score=float(min_score))


def detections_from_pixels(boxes_px, keypoints_px, scores, frame_size,
                           limit: int) -> tuple[Detection, ...]:  # fmt: skip
    """Detection records (pixels and normalised) of boxes (xmin, ymin, xmax, ymax) and
    keypoints in frame pixels, the first `limit`."""
    size = np.asarray(frame_size, np.float64)
    out = []
    for k in range(min(len(scores), limit)):
        box_px = np.asarray(boxes_px[k], np.float64)
        kps_px = np.asarray(keypoints_px[k], np.float64).reshape(-1, 2)
        out.append(Detection(
            score=float(scores[k]), box=box_px / np.tile(size, 2), box_px=box_px,
            keypoints=kps_px / size, keypoints_px=kps_px,
        ))  # fmt: skip
    return tuple(out)


def parse_records(status: bytes, records: bytes, record, max_detections: int) -> tuple:
    """Detections from the GPU decoder's read-back status (count first) and records
    (engine/vision/detections.py DetectionRecord layout)."""
    count = int(np.frombuffer(status, np.uint32)[0])
    raw = np.frombuffer(records, np.float32)
    recs = raw[: max_detections * record.stride].reshape(-1, record.stride)[:count]
    k = record.num_keypoints
    out = []
    for r in recs.astype(np.float64):
        px, norm = r[record.frame_px : record.frame_px + record.coords], r[record.frame_norm :]
        out.append(Detection(
            score=float(r[0]), box=norm[:4].copy(), box_px=px[:4].copy(),
            keypoints=norm[4 : 4 + 2 * k].reshape(k, 2).copy(),
            keypoints_px=px[4:].reshape(k, 2).copy(),
        ))  # fmt: skip
    return tuple(out)
