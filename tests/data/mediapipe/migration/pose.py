"""MediaPipe's Pose example (docs/solutions/pose.md, Python Solution API), adapted to run on
a video file.

- input: VIDEO (a file, or an image sequence such as frames/%03d.png), OUT_DIR, and the
  stills for the "static images" part (the example's IMAGE_FILES; model_complexity=2:
  pose_landmark_heavy)
- output: one line per still ("image N: ...") and per frame ("frame N: ..."): the nose in
  pixels (0 decimals), as the example prints it; the annotated stills (background grey
  where the segmentation mask is <= 0.1) and every 30th annotated frame as PNG in OUT_DIR
- changed from the example: as face_detection.py says; and the world landmarks' 3-D plot
  (plot_landmarks, a matplotlib window) left out
- usage: python pose.py VIDEO OUT_DIR [IMAGE ...]
"""

# fmt: off
import sys

import cv2
import mediapipe as mp
import numpy as np

mp_drawing = mp.solutions.drawing_utils
mp_drawing_styles = mp.solutions.drawing_styles
mp_pose = mp.solutions.pose
VIDEO, OUT_DIR = sys.argv[1], sys.argv[2]
SAVE_EVERY = 30


def line(pose_landmarks, image_width, image_height):
  if not pose_landmarks:
    return '-'
  return (
      f'nose ({pose_landmarks.landmark[mp_pose.PoseLandmark.NOSE].x * image_width:.0f}, '
      f'{pose_landmarks.landmark[mp_pose.PoseLandmark.NOSE].y * image_height:.0f})')


# For static images:
IMAGE_FILES = sys.argv[3:]
BG_COLOR = (192, 192, 192) # gray
with mp_pose.Pose(
    static_image_mode=True,
    model_complexity=2,
    enable_segmentation=True,
    min_detection_confidence=0.5) as pose:
  for idx, file in enumerate(IMAGE_FILES):
    image = cv2.imread(file)
    image_height, image_width, _ = image.shape
    # Convert the BGR image to RGB before processing.
    results = pose.process(cv2.cvtColor(image, cv2.COLOR_BGR2RGB))

    print(f'image {idx}:', line(results.pose_landmarks, image_width, image_height))
    if not results.pose_landmarks:
      continue

    annotated_image = image.copy()
    # Draw segmentation on the image.
    # To improve segmentation around boundaries, consider applying a joint
    # bilateral filter to "results.segmentation_mask" with "image".
    condition = np.stack((results.segmentation_mask,) * 3, axis=-1) > 0.1
    bg_image = np.zeros(image.shape, dtype=np.uint8)
    bg_image[:] = BG_COLOR
    annotated_image = np.where(condition, annotated_image, bg_image)
    # Draw pose landmarks on the image.
    mp_drawing.draw_landmarks(
        annotated_image,
        results.pose_landmarks,
        mp_pose.POSE_CONNECTIONS,
        landmark_drawing_spec=mp_drawing_styles.get_default_pose_landmarks_style())
    cv2.imwrite(OUT_DIR + '/annotated_image' + str(idx) + '.png', annotated_image)

# For webcam input:
cap = cv2.VideoCapture(VIDEO)
frame = 0
with mp_pose.Pose(
    min_detection_confidence=0.5,
    min_tracking_confidence=0.5) as pose:
  while cap.isOpened():
    success, image = cap.read()
    if not success:
      print("Ignoring empty camera frame.")
      # If loading a video, use 'break' instead of 'continue'.
      break

    # To improve performance, optionally mark the image as not writeable to
    # pass by reference.
    image.flags.writeable = False
    image = cv2.cvtColor(image, cv2.COLOR_BGR2RGB)
    results = pose.process(image)
    print(f'frame {frame}:', line(results.pose_landmarks, image.shape[1], image.shape[0]))

    # Draw the pose annotation on the image.
    image.flags.writeable = True
    image = cv2.cvtColor(image, cv2.COLOR_RGB2BGR)
    mp_drawing.draw_landmarks(
        image,
        results.pose_landmarks,
        mp_pose.POSE_CONNECTIONS,
        landmark_drawing_spec=mp_drawing_styles.get_default_pose_landmarks_style())
    # Flip the image horizontally for a selfie-view display.
    if frame % SAVE_EVERY == 0:
      cv2.imwrite(f'{OUT_DIR}/frame_{frame:03d}.png', cv2.flip(image, 1))
    frame += 1
cap.release()
