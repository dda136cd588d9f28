"""Background replacement, as users write it on MediaPipe Selfie Segmentation: the frame
where `segmentation_mask` > 0.5, a new background elsewhere.

- input: VIDEO (a file, or an image sequence such as frames/%03d.png), OUT_DIR
- output: one line per frame ("frame N: person 0.214"): the share of the frame kept
  (3 decimals); every 30th composited frame as PNG in OUT_DIR
- semantics: the general model (model_selection=0); the background a vertical gradient
  the size of the first frame, made once
- usage: python background_replacement.py VIDEO OUT_DIR
"""

import sys

import cv2
import mediapipe as mp
import numpy as np

mp_selfie_segmentation = mp.solutions.selfie_segmentation
SAVE_EVERY = 30


def gradient(height, width):
    top, bottom = np.array([255, 160, 60], np.float32), np.array([40, 20, 10], np.float32)
    t = np.linspace(0.0, 1.0, height, dtype=np.float32)[:, None, None]
    column = (top * (1 - t) + bottom * t).astype(np.uint8)
    return np.repeat(column, width, axis=1)


video, out_dir = sys.argv[1], sys.argv[2]
cap = cv2.VideoCapture(video)
frame = 0
background = None
with mp_selfie_segmentation.SelfieSegmentation(model_selection=0) as segmenter:
    while cap.isOpened():
        ok, image = cap.read()
        if not ok:
            break
        if background is None:
            background = gradient(*image.shape[:2])
        results = segmenter.process(cv2.cvtColor(image, cv2.COLOR_BGR2RGB))
        person = results.segmentation_mask > 0.5
        output = np.where(person[..., None], image, background)
        print(f"frame {frame}: person {person.mean():.3f}")
        if frame % SAVE_EVERY == 0:
            cv2.imwrite(f"{out_dir}/frame_{frame:03d}.png", output)
        frame += 1
cap.release()
