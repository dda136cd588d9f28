"""The eye aspect ratio (EAR: Soukupova and Cech, 2016), as users compute it on MediaPipe
Face Mesh with refined landmarks for blink detection: per eye, the two vertical distances
between the lids over twice the horizontal one, from six landmarks in pixels.

- input: VIDEO (a file, or an image sequence such as frames/%03d.png), OUT_DIR
- output: one line per frame ("frame N: ear 0.31 0.29"; "-": no face), the right and
  left eye's EAR (2 decimals); every 30th frame with the eyes and irises drawn and the
  mean EAR written, as PNG in OUT_DIR
- semantics: refine_landmarks=True (the attention model: lids and irises refined)
- usage: python eye_aspect_ratio.py VIDEO OUT_DIR
"""

import math
import sys

import cv2
import mediapipe as mp

mp_face_mesh = mp.solutions.face_mesh
mp_drawing = mp.solutions.drawing_utils
mp_drawing_styles = mp.solutions.drawing_styles
# p1 (outer corner), p2, p3 (upper lid), p4 (inner corner), p5, p6 (lower lid)
RIGHT_EYE = [33, 160, 158, 133, 153, 144]
LEFT_EYE = [362, 385, 387, 263, 373, 380]
SAVE_EVERY = 30


def eye_aspect_ratio(landmarks, indices, width, height):
    p = [(landmarks[i].x * width, landmarks[i].y * height) for i in indices]
    vertical = math.dist(p[1], p[5]) + math.dist(p[2], p[4])
    return vertical / (2.0 * math.dist(p[0], p[3]))


video, out_dir = sys.argv[1], sys.argv[2]
cap = cv2.VideoCapture(video)
frame = 0
with mp_face_mesh.FaceMesh(
    max_num_faces=1,
    refine_landmarks=True,
    min_detection_confidence=0.5,
    min_tracking_confidence=0.5,
) as face_mesh:
    while cap.isOpened():
        success, image = cap.read()
        if not success:
            break
        height, width = image.shape[:2]
        results = face_mesh.process(cv2.cvtColor(image, cv2.COLOR_BGR2RGB))
        text = "-"
        if results.multi_face_landmarks:
            face_landmarks = results.multi_face_landmarks[0]
            right = eye_aspect_ratio(face_landmarks.landmark, RIGHT_EYE, width, height)
            left = eye_aspect_ratio(face_landmarks.landmark, LEFT_EYE, width, height)
            text = f"ear {right:.2f} {left:.2f}"
            for connections in (
                mp_face_mesh.FACEMESH_LEFT_EYE,
                mp_face_mesh.FACEMESH_RIGHT_EYE,
                mp_face_mesh.FACEMESH_IRISES,
            ):
                mp_drawing.draw_landmarks(
                    image,
                    face_landmarks,
                    connections,
                    landmark_drawing_spec=None,
                    connection_drawing_spec=mp_drawing.DrawingSpec(color=(0, 255, 0), thickness=1),
                )
            cv2.putText(
                image,
                f"EAR {(right + left) / 2:.2f}",
                (20, 40),
                cv2.FONT_HERSHEY_SIMPLEX,
                1,
                (0, 0, 255),
                2,
            )
        print(f"frame {frame}: {text}")
        if frame % SAVE_EVERY == 0:
            cv2.imwrite(f"{out_dir}/frame_{frame:03d}.png", image)
        frame += 1
cap.release()
