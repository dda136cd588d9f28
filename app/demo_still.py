"""Face detection on a still image: BlazeFace on the engine, boxes drawn with OpenCV.

- input: a face_detection_short_range .tflite model and an image file
- output: a PNG with the face boxes and 6 keypoints; one line per face on stdout
  (box in frame pixels and score)
- options: --backend reference (the engine's numpy interpreter, default) | litert | auto
- usage: `python -m app.demo_still --model models/face_detection_short_range.tflite
  --image assets/astronaut.png --output out/demo.png`
Errors (missing files, a model that is not BlazeFace) print one line and exit with status 2.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import cv2
import numpy as np

from engine.errors import EngineError
from engine.reference import ORACLES, run_model
from engine.vision import KEYPOINT_NAMES, Detections, detect_faces, letterbox

KEYPOINT_COLORS = [  # BGR, in KEYPOINT_NAMES order
    (255, 0, 0),
    (0, 0, 255),
    (0, 255, 255),
    (255, 0, 255),
    (0, 255, 0),
    (255, 255, 0),
]


class DemoError(Exception):
    """A user-facing problem: missing file, wrong model; the message says what to do."""


def split_outputs(outputs: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """(regressors, classificators) from a BlazeFace model's outputs, by name or by shape."""
    if "regressors" in outputs and "classificators" in outputs:
        return outputs["regressors"], outputs["classificators"]
    by_width = {v.shape[-1]: v for v in outputs.values() if v.ndim == 3 and v.shape[1] == 896}
    if 16 in by_width and 1 in by_width:
        return by_width[16], by_width[1]
    shapes = {k: tuple(v.shape) for k, v in outputs.items()}
    raise DemoError(f"not a BlazeFace model: outputs {shapes}, expected [1,896,16] + [1,896,1]")


def detect(model: Path, frame_rgb: np.ndarray, backend: str = "reference") -> Detections:
    """Letterbox, run the model, decode: faces in frame pixels."""
    tensor, frame_from_tensor = letterbox(frame_rgb)
    try:
        outputs = run_model(model, [tensor], backend)
    except ValueError as e:  # input shape/dtype mismatch: not the model we expect
        raise DemoError(f"{model}: not a BlazeFace short-range model ({e})") from None
    regressors, classificators = split_outputs(outputs)
    return detect_faces(regressors, classificators, frame_from_tensor)


def draw(frame_bgr: np.ndarray, det: Detections) -> np.ndarray:
    """A copy of the frame with each box, its score and its 6 keypoints drawn."""
    out = frame_bgr.copy()
    thick = max(1, round(max(out.shape[:2]) / 256))
    for box, kps, score in zip(det.boxes, det.keypoints, det.scores, strict=True):
        x0, y0, x1, y1 = (int(round(v)) for v in box)
        cv2.rectangle(out, (x0, y0), (x1, y1), (0, 255, 0), thick, cv2.LINE_AA)
        label = f"face {score:.2f}"
        cv2.putText(out, label, (x0, max(12, y0 - 4)), cv2.FONT_HERSHEY_SIMPLEX, 0.4 * thick,
                    (0, 255, 0), thick, cv2.LINE_AA)  # fmt: skip
        for (x, y), color in zip(kps, KEYPOINT_COLORS, strict=True):
            cv2.circle(out, (int(round(x)), int(round(y))), 2 * thick, color, -1, cv2.LINE_AA)
    return out


def run(model: Path, image: Path, output: Path, backend: str = "reference") -> Detections:
    if not model.is_file():
        raise DemoError(
            f"model not found: {model} (run `make models` or `python -m engine.catalog.fetch`)"
        )
    if not image.is_file():
        raise DemoError(f"image not found: {image} (run `make assets`)")
    frame = cv2.imread(str(image), cv2.IMREAD_COLOR)
    if frame is None:
        raise DemoError(f"cannot read image {image} (not an image OpenCV can decode)")
    det = detect(model, np.ascontiguousarray(frame[:, :, ::-1]), backend)
    output.parent.mkdir(parents=True, exist_ok=True)
    if not cv2.imwrite(str(output), draw(frame, det)):
        raise DemoError(f"cannot write {output}")
    h, w = frame.shape[:2]
    print(f"{image} ({w}x{h}), {model.name} on {backend}: {len(det)} face(s)")
    for i, (box, kps, score) in enumerate(zip(det.boxes, det.keypoints, det.scores, strict=True)):
        x0, y0, x1, y1 = box
        print(f"face {i}: box ({x0:.1f}, {y0:.1f})-({x1:.1f}, {y1:.1f}) px, score {score:.3f}")
        named = ", ".join(
            f"{n} ({x:.0f},{y:.0f})" for n, (x, y) in zip(KEYPOINT_NAMES, kps, strict=True)
        )
        print(f"        keypoints: {named}")
    print(f"wrote {output}")
    return det


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m app.demo_still", description=__doc__.split("\n")[0])
    p.add_argument("--model", type=Path, default=Path("models/face_detection_short_range.tflite"))
    p.add_argument("--image", type=Path, default=Path("assets/astronaut.png"))
    p.add_argument("--output", type=Path, default=Path("out/demo.png"))
    p.add_argument("--backend", choices=ORACLES, default="reference")
    a = p.parse_args(argv)
    try:
        run(a.model, a.image, a.output, a.backend)
    except (DemoError, EngineError) as e:
        print(f"demo_still: error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
