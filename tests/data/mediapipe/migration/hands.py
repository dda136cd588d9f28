"""MediaPipe's Hands example (docs/solutions/hands.md, Python Solution API), adapted to run
on a video file.

- input: VIDEO (a file, or an image sequence such as frames/%03d.png), OUT_DIR, and the
  stills for the "static images" part (the example's IMAGE_FILES)
- output: one line per still ("image N: ...") and per frame ("frame N: ..."): each hand's
  handedness, its score (2 decimals) and the index finger tip in pixels (0 decimals); the
  annotated stills and every 30th annotated frame as PNG in OUT_DIR
- changed from the example: as face_detection.py says; and the hand world landmarks'
  3-D plot (plot_landmarks, a matplotlib window) left out
- usage: python hands.py VIDEO OUT_DIR [IMAGE ...]
"""

# fmt: off
import sys

import cv2
import mediapipe as mp

mp_drawing = mp.solutions.drawing_utils
mp_drawing_styles = mp.solutions.drawing_styles
mp_hands = mp.solutions.hands
VIDEO, OUT_DIR = sys.argv[1], sys.argv[2]
SAVE_EVERY = 30


def line(results, image_width, image_height):
  hands = zip(results.multi_handedness or [], results.multi_hand_landmarks or [], strict=True)
  return ' '.join(
      f'{handedness.classification[0].label} {handedness.classification[0].score:.2f} '
      f'({hand_landmarks.landmark[mp_hands.HandLandmark.INDEX_FINGER_TIP].x * image_width:.0f}, '
      f'{hand_landmarks.landmark[mp_hands.HandLandmark.INDEX_FINGER_TIP].y * image_height:.0f})'
      for handedness, hand_landmarks in hands) or '-'


# For static images:
IMAGE_FILES = sys.argv[3:]
with mp_hands.Hands(
    static_image_mode=True,
    max_num_hands=2,
    min_detection_confidence=0.5) as hands:
  for idx, file in enumerate(IMAGE_FILES):
    # Read an image, flip it around y-axis for correct handedness output (see
    # above).
    image = cv2.flip(cv2.imread(file), 1)
    # Convert the BGR image to RGB before processing.
    results = hands.process(cv2.cvtColor(image, cv2.COLOR_BGR2RGB))

    # Print handedness and draw hand landmarks on the image.
    image_height, image_width, _ = image.shape
    print(f'image {idx}:', line(results, image_width, image_height))
    if not results.multi_hand_landmarks:
      continue
    annotated_image = image.copy()
    for hand_landmarks in results.multi_hand_landmarks:
      mp_drawing.draw_landmarks(
          annotated_image,
          hand_landmarks,
          mp_hands.HAND_CONNECTIONS,
          mp_drawing_styles.get_default_hand_landmarks_style(),
          mp_drawing_styles.get_default_hand_connections_style())
    cv2.imwrite(
        OUT_DIR + '/annotated_image' + str(idx) + '.png', cv2.flip(annotated_image, 1))

# For webcam input:
cap = cv2.VideoCapture(VIDEO)
frame = 0
with mp_hands.Hands(
    model_complexity=0,
    min_detection_confidence=0.5,
    min_tracking_confidence=0.5) as hands:
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
    results = hands.process(image)
    print(f'frame {frame}:', line(results, image.shape[1], image.shape[0]))

    # Draw the hand annotations on the image.
    image.flags.writeable = True
    image = cv2.cvtColor(image, cv2.COLOR_RGB2BGR)
    if results.multi_hand_landmarks:
      for hand_landmarks in results.multi_hand_landmarks:
        mp_drawing.draw_landmarks(
            image,
            hand_landmarks,
            mp_hands.HAND_CONNECTIONS,
            mp_drawing_styles.get_default_hand_landmarks_style(),
            mp_drawing_styles.get_default_hand_connections_style())
    # Flip the image horizontally for a selfie-view display.
    if frame % SAVE_EVERY == 0:
      cv2.imwrite(f'{OUT_DIR}/frame_{frame:03d}.png', cv2.flip(image, 1))
    frame += 1
cap.release()
