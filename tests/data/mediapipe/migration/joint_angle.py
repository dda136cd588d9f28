"""A joint angle, as users compute one on MediaPipe Pose: the elbow's angle between the
shoulder and the wrist, from the `PoseLandmark` indices, in degrees.

- input: VIDEO (a file, or an image sequence such as frames/%03d.png), OUT_DIR
- output: one line per frame ("frame N: left elbow 87 right elbow 152"; "-": no pose),
  degrees rounded to whole numbers; every 30th frame with the landmarks and the angles
  drawn at the elbows, as PNG in OUT_DIR
- semantics: the angle of the normalised (x, y) points, folded into 0-180 degrees
- usage: python joint_angle.py VIDEO OUT_DIR
"""

import sys

import cv2
import mediapipe as mp
import numpy as np

mp_pose = mp.solutions.pose
mp_drawing = mp.solutions.drawing_utils
SAVE_EVERY = 30


def calculate_angle(a, b, c):
    a, b, c = np.array(a), np.array(b), np.array(c)
    radians = np.arctan2(c[1] - b[1], c[0] - b[0]) - np.arctan2(a[1] - b[1], a[0] - b[0])
    angle = np.abs(radians * 180.0 / np.pi)
    if angle > 180.0:
        angle = 360 - angle
    return angle


def point(landmarks, name):
    landmark = landmarks[mp_pose.PoseLandmark[name].value]
    return [landmark.x, landmark.y]


video, out_dir = sys.argv[1], sys.argv[2]
cap = cv2.VideoCapture(video)
frame = 0
with mp_pose.Pose(min_detection_confidence=0.5, min_tracking_confidence=0.5) as pose:
    while cap.isOpened():
        ret, image = cap.read()
        if not ret:
            break
        results = pose.process(cv2.cvtColor(image, cv2.COLOR_BGR2RGB))
        height, width = image.shape[:2]
        text = "-"
        if results.pose_landmarks:
            landmarks = results.pose_landmarks.landmark
            angles = []
            for side in ("LEFT", "RIGHT"):
                shoulder = point(landmarks, f"{side}_SHOULDER")
                elbow = point(landmarks, f"{side}_ELBOW")
                wrist = point(landmarks, f"{side}_WRIST")
                angle = calculate_angle(shoulder, elbow, wrist)
                angles.append(f"{side.lower()} elbow {angle:.0f}")
                cv2.putText(
                    image,
                    str(int(angle)),
                    tuple(np.multiply(elbow, [width, height]).astype(int)),
                    cv2.FONT_HERSHEY_SIMPLEX,
                    0.5,
                    (255, 255, 255),
                    2,
                    cv2.LINE_AA,
                )
            text = " ".join(angles)
            mp_drawing.draw_landmarks(image, results.pose_landmarks, mp_pose.POSE_CONNECTIONS)
        print(f"frame {frame}: {text}")
        if frame % SAVE_EVERY == 0:
            cv2.imwrite(f"{out_dir}/frame_{frame:03d}.png", image)
        frame += 1
cap.release()
