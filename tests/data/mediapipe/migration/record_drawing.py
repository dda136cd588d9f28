"""Runs a migration script as it is and records what each image it writes was made from:
the pixels of every landmark and detection drawn on it, and the segmentation mask's
pixels above the scripts' thresholds, since the frame's process() call.

- input: RECORD (the JSON file to write), SCRIPT and the script's own arguments
- output: the script's own output, and RECORD: {image file name: {"drawn": [one entry per
  draw_landmarks / draw_detection call: null (nothing to draw), or the points as
  drawing_utils places them, [x, y] pixels, "hidden" (visibility or presence < 0.5) or
  null (outside the image)], "mask": null, or the CRC-32 of the mask's pixels > t for
  each t of MASK_THRESHOLDS}}; a detection's box corners come first, then its key points
- semantics: wraps whichever `drawing_utils` the script's `mp` is (MediaPipe's or the
  drop-in's), its SolutionBase.process and cv2.imwrite, computing the pixels as
  MediaPipe 0.10.14's drawing_utils does (`_normalized_to_pixel_coordinates`); the script
  runs unchanged (`runpy`, as __main__). Two runs' images are comparable pixel for pixel
  where their records agree: the same points drawn at the same pixels, the same pixels
  kept by the mask
- usage: python record_drawing.py RECORD.json SCRIPT.py VIDEO OUT_DIR [IMAGE ...]
  (imports nothing of this project: it runs in MediaPipe's venv too)
"""

from __future__ import annotations

import inspect
import json
import math
import runpy
import sys
import zlib
from pathlib import Path

VISIBILITY_THRESHOLD = PRESENCE_THRESHOLD = 0.5  # drawing_utils' own
MASK_THRESHOLDS = (0.1, 0.5)  # the examples' `segmentation_mask > 0.1`, the patterns' 0.5


def _valid(value: float) -> bool:
    return (value > 0 or math.isclose(0, value)) and (value < 1 or math.isclose(1, value))


def pixel(x: float, y: float, width: int, height: int) -> list[int] | None:
    """drawing_utils' _normalized_to_pixel_coordinates: None outside [0, 1]."""
    if not (_valid(x) and _valid(y)):
        return None
    return [min(math.floor(x * width), width - 1), min(math.floor(y * height), height - 1)]


def landmark_points(landmark_list, width: int, height: int) -> list | None:
    if landmark_list is None:
        return None
    points = []
    for lm in landmark_list.landmark:
        hidden = (lm.HasField("visibility") and lm.visibility < VISIBILITY_THRESHOLD) or (
            lm.HasField("presence") and lm.presence < PRESENCE_THRESHOLD
        )
        points.append("hidden" if hidden else pixel(lm.x, lm.y, width, height))
    return points


def detection_points(detection, width: int, height: int) -> list | None:
    if not detection.location_data:
        return None
    location = detection.location_data
    points = [pixel(k.x, k.y, width, height) for k in location.relative_keypoints]
    if location.HasField("relative_bounding_box"):
        box = location.relative_bounding_box
        points = [pixel(box.xmin, box.ymin, width, height),
                  pixel(box.xmin + box.width, box.ymin + box.height, width, height),
                  *points]  # fmt: skip
    return points


def mask_digest(mask) -> list[int] | None:
    """CRC-32 of the mask's pixels above each of MASK_THRESHOLDS; None without a mask."""
    if mask is None:
        return None
    import numpy as np

    return [zlib.crc32(np.packbits(np.asarray(mask) > t).tobytes()) for t in MASK_THRESHOLDS]


def main(argv: list[str]) -> None:
    record, script, *args = argv
    drawn: list = []
    frame: dict = {"mask": None}
    images: dict[str, dict] = {}

    def on_process(cls) -> None:
        original = cls.process

        def process(self, *a, **k):
            drawn.clear()  # a new frame: what was drawn before belongs to the last one
            result = original(self, *a, **k)
            frame["mask"] = mask_digest(getattr(result, "segmentation_mask", None))
            return result

        cls.process = process

    def on_draw(module) -> None:
        for name, points in (("draw_landmarks", landmark_points),
                             ("draw_detection", detection_points)):  # fmt: skip
            original = getattr(module, name)
            signature = inspect.signature(original)

            def draw(*a, _original=original, _signature=signature, _points=points, **k):
                bound = _signature.bind(*a, **k).arguments
                image = bound["image"]
                subject = bound.get("landmark_list", bound.get("detection"))
                drawn.append(_points(subject, image.shape[1], image.shape[0]))
                return _original(*a, **k)

            setattr(module, name, draw)

    import cv2

    for base, drawing in (("mediapipe.python.solution_base", "mediapipe.python.solutions.drawing_utils"),
                          ("engine.vision.mediapipe.solution_base", "engine.vision.mediapipe.solutions.drawing_utils")):  # fmt: skip
        try:
            on_process(__import__(base, fromlist=["x"]).SolutionBase)
            on_draw(__import__(drawing, fromlist=["x"]))
        except ImportError:
            continue
    imwrite = cv2.imwrite

    def write(path, image, *a, **k):
        images[Path(path).name] = {"drawn": list(drawn), "mask": frame["mask"]}
        return imwrite(path, image, *a, **k)

    cv2.imwrite = write
    sys.argv = [script, *args]
    try:
        runpy.run_path(script, run_name="__main__")
    finally:
        Path(record).write_text(json.dumps(images))


if __name__ == "__main__":
    main(sys.argv[1:])
