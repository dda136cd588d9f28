"""MediaPipe's Holistic example (docs/solutions/holistic.md, Python Solution API), adapted
to run on a video file.

- input: VIDEO (a file, or an image sequence such as frames/%03d.png), OUT_DIR, and the
  stills for the "static images" part (the example's IMAGE_FILES, each with a person: the
  example reads the segmentation mask unguarded; model_complexity=2: pose_landmark_heavy;
  refine_face_landmarks=True)
- output: one line per still ("image N: ...") and per frame ("frame N: ..."): the nose in
  pixels (0 decimals), as the example prints it, and how many landmarks the face and each
  hand have (0: not found); the annotated stills and every 30th annotated frame as PNG in
  OUT_DIR
- changed from the example: as face_detection.py says; the world landmarks' 3-D plot
  (plot_landmarks, a matplotlib window) left out; and `import numpy as np`, which the
  example uses without importing
- usage: python holistic.py VIDEO OUT_DIR [IMAGE ...]
"""

# fmt: off
import sys

import cv2
import mediapipe as mp
import numpy as np

mp_drawing = mp.solutions.drawing_utils
mp_drawing_styles = mp.solutions.drawing_styles
mp_holistic = mp.solutions.holistic
VIDEO, OUT_DIR = sys.argv[1], sys.argv[2]
SAVE_EVERY = 30


def line(results, image_width, image_height):
  nose = '-'
  if results.pose_landmarks:
    nose = (
        f'({results.pose_landmarks.landmark[mp_holistic.PoseLandmark.NOSE].x * image_width:.0f}, '
        f'{results.pose_landmarks.landmark[mp_holistic.PoseLandmark.NOSE].y * image_height:.0f})')
  counts = [len(part.landmark) if part else 0 for part in (
      results.face_landmarks, results.left_hand_landmarks, results.right_hand_landmarks)]
  return f'nose {nose} face {counts[0]} left hand {counts[1]} right hand {counts[2]}'


# For static images:
IMAGE_FILES = sys.argv[3:]
BG_COLOR = (192, 192, 192) # gray
with mp_holistic.Holistic(
    static_image_mode=True,
    model_complexity=2,
    enable_segmentation=True,
    refine_face_landmarks=True) as holistic:
  for idx, file in enumerate(IMAGE_FILES):
    image = cv2.imread(file)
    image_height, image_width, _ = image.shape
    # Convert the BGR image to RGB before processing.
    results = holistic.process(cv2.cvtColor(image, cv2.COLOR_BGR2RGB))

    print(f'image {idx}:', line(results, image_width, image_height))

    annotated_image = image.copy()
    # Draw segmentation on the image.
    # To improve segmentation around boundaries, consider applying a joint
    # bilateral filter to "results.segmentation_mask" with "image".
    condition = np.stack((results.segmentation_mask,) * 3, axis=-1) > 0.1
    bg_image = np.zeros(image.shape, dtype=np.uint8)
    bg_image[:] = BG_COLOR
    annotated_image = np.where(condition, annotated_image, bg_image)
    # Draw pose, left and right hands, and face landmarks on the image.
    mp_drawing.draw_landmarks(
        annotated_image,
        results.face_landmarks,
        mp_holistic.FACEMESH_TESSELATION,
        landmark_drawing_spec=None,
        connection_drawing_spec=mp_drawing_styles
        .get_default_face_mesh_tesselation_style())
    mp_drawing.draw_landmarks(
        annotated_image,
        results.pose_landmarks,
        mp_holistic.POSE_CONNECTIONS,
        landmark_drawing_spec=mp_drawing_styles.
        get_default_pose_landmarks_style())
    cv2.imwrite(OUT_DIR + '/annotated_image' + str(idx) + '.png', annotated_image)

# For webcam input:
cap = cv2.VideoCapture(VIDEO)
frame = 0
with mp_holistic.Holistic(
    min_detection_confidence=0.5,
    min_tracking_confidence=0.5) as holistic:
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
    results = holistic.process(image)
    print(f'frame {frame}:', line(results, image.shape[1], image.shape[0]))

    # Draw landmark annotation on the image.
    image.flags.writeable = True
    image = cv2.cvtColor(image, cv2.COLOR_RGB2BGR)
    mp_drawing.draw_landmarks(
        image,
        results.face_landmarks,
        mp_holistic.FACEMESH_CONTOURS,
        landmark_drawing_spec=None,
        connection_drawing_spec=mp_drawing_styles
        .get_default_face_mesh_contours_style())
    mp_drawing.draw_landmarks(
        image,
        results.pose_landmarks,
        mp_holistic.POSE_CONNECTIONS,
        landmark_drawing_spec=mp_drawing_styles
        .get_default_pose_landmarks_style())
    # Flip the image horizontally for a selfie-view display.
    if frame % SAVE_EVERY == 0:
      cv2.imwrite(f'{OUT_DIR}/frame_{frame:03d}.png', cv2.flip(image, 1))
    frame += 1
cap.release()
