"""MediaPipe's Face Detection example (docs/solutions/face_detection.md, Python Solution
API), adapted to run on a video file.

- input: VIDEO (a file, or an image sequence such as frames/%03d.png), OUT_DIR, and the
  stills for the "static images" part (the example's IMAGE_FILES)
- output: one line per still ("image N: ...") and per frame ("frame N: ..."): the
  detections, rounded (score 2 decimals, box and nose tip 3); the annotated stills and
  every 30th annotated frame as PNG in OUT_DIR
- changed from the example (the same in every script of this folder): the paths from the
  command line; `break` at the video's end, as the example's comment says; the window
  (cv2.imshow) replaced by writing frames; its prints made one rounded line per image
- usage: python face_detection.py VIDEO OUT_DIR [IMAGE ...]
"""

# fmt: off
import sys

import cv2
import mediapipe as mp

mp_face_detection = mp.solutions.face_detection
mp_drawing = mp.solutions.drawing_utils
VIDEO, OUT_DIR = sys.argv[1], sys.argv[2]
SAVE_EVERY = 30


def line(detections):
  return ' '.join(
      f'{d.score[0]:.2f} box ({d.location_data.relative_bounding_box.xmin:.3f}, '
      f'{d.location_data.relative_bounding_box.ymin:.3f}, '
      f'{d.location_data.relative_bounding_box.width:.3f}, '
      f'{d.location_data.relative_bounding_box.height:.3f}) nose '
      f'({mp_face_detection.get_key_point(d, mp_face_detection.FaceKeyPoint.NOSE_TIP).x:.3f}, '
      f'{mp_face_detection.get_key_point(d, mp_face_detection.FaceKeyPoint.NOSE_TIP).y:.3f})'
      for d in detections or []) or '-'


# For static images:
IMAGE_FILES = sys.argv[3:]
with mp_face_detection.FaceDetection(
    model_selection=1, min_detection_confidence=0.5) as face_detection:
  for idx, file in enumerate(IMAGE_FILES):
    image = cv2.imread(file)
    # Convert the BGR image to RGB and process it with MediaPipe Face Detection.
    results = face_detection.process(cv2.cvtColor(image, cv2.COLOR_BGR2RGB))
    print(f'image {idx}: nose tips', ' '.join(
        f'({mp_face_detection.get_key_point(d, mp_face_detection.FaceKeyPoint.NOSE_TIP).x:.3f}, '
        f'{mp_face_detection.get_key_point(d, mp_face_detection.FaceKeyPoint.NOSE_TIP).y:.3f})'
        for d in results.detections or []))

    # Draw face detections of each face.
    if not results.detections:
      continue
    annotated_image = image.copy()
    for detection in results.detections:
      mp_drawing.draw_detection(annotated_image, detection)
    cv2.imwrite(OUT_DIR + '/annotated_image' + str(idx) + '.png', annotated_image)

# For webcam input:
cap = cv2.VideoCapture(VIDEO)
frame = 0
with mp_face_detection.FaceDetection(
    model_selection=0, min_detection_confidence=0.5) as face_detection:
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
    results = face_detection.process(image)
    print(f'frame {frame}:', line(results.detections))

    # Draw the face detection annotations on the image.
    image.flags.writeable = True
    image = cv2.cvtColor(image, cv2.COLOR_RGB2BGR)
    if results.detections:
      for detection in results.detections:
        mp_drawing.draw_detection(image, detection)
    # Flip the image horizontally for a selfie-view display.
    if frame % SAVE_EVERY == 0:
      cv2.imwrite(f'{OUT_DIR}/frame_{frame:03d}.png', cv2.flip(image, 1))
    frame += 1
cap.release()
