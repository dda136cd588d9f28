"""A finger counter, as users write one on MediaPipe Hands: a finger is up when its tip is
above its PIP joint (`landmark[tip].y < landmark[pip].y`), the thumb when its tip is
beside its IP joint, away from the palm.

- input: VIDEO (a file, or an image sequence such as frames/%03d.png), OUT_DIR
- output: one line per frame ("frame N: Left 2 Right 5"): each hand's label and raised
  fingers, in MediaPipe's order ("-": no hand); every 30th frame with the landmarks and
  the total drawn, as PNG in OUT_DIR
- semantics: the frame is mirrored first (a selfie view, as MediaPipe's labels assume),
  so a right hand's thumb is up when its tip is left of its IP joint
- usage: python finger_counter.py VIDEO OUT_DIR
"""

import sys

import cv2
import mediapipe as mp

mp_hands = mp.solutions.hands
mp_drawing = mp.solutions.drawing_utils
mp_drawing_styles = mp.solutions.drawing_styles
HL = mp_hands.HandLandmark
TIPS = [HL.INDEX_FINGER_TIP, HL.MIDDLE_FINGER_TIP, HL.RING_FINGER_TIP, HL.PINKY_TIP]
PIPS = [HL.INDEX_FINGER_PIP, HL.MIDDLE_FINGER_PIP, HL.RING_FINGER_PIP, HL.PINKY_PIP]
SAVE_EVERY = 30


def count_fingers(hand_landmarks, label):
    lm = hand_landmarks.landmark
    fingers = sum(lm[tip].y < lm[pip].y for tip, pip in zip(TIPS, PIPS, strict=True))
    if label == "Right":
        fingers += lm[HL.THUMB_TIP].x < lm[HL.THUMB_IP].x
    else:
        fingers += lm[HL.THUMB_TIP].x > lm[HL.THUMB_IP].x
    return int(fingers)


video, out_dir = sys.argv[1], sys.argv[2]
cap = cv2.VideoCapture(video)
frame = 0
with mp_hands.Hands(
    max_num_hands=2, min_detection_confidence=0.5, min_tracking_confidence=0.5
) as hands:
    while True:
        ok, image = cap.read()
        if not ok:
            break
        image = cv2.flip(image, 1)
        results = hands.process(cv2.cvtColor(image, cv2.COLOR_BGR2RGB))
        counts = []
        if results.multi_hand_landmarks:
            for hand_landmarks, handedness in zip(
                results.multi_hand_landmarks, results.multi_handedness, strict=True
            ):
                label = handedness.classification[0].label
                counts.append((label, count_fingers(hand_landmarks, label)))
                mp_drawing.draw_landmarks(
                    image,
                    hand_landmarks,
                    mp_hands.HAND_CONNECTIONS,
                    mp_drawing_styles.get_default_hand_landmarks_style(),
                    mp_drawing_styles.get_default_hand_connections_style(),
                )
        print(f"frame {frame}:", " ".join(f"{label} {n}" for label, n in counts) or "-")
        total = sum(n for _, n in counts)
        cv2.putText(image, str(total), (20, 60), cv2.FONT_HERSHEY_SIMPLEX, 2, (255, 0, 0), 3)
        if frame % SAVE_EVERY == 0:
            cv2.imwrite(f"{out_dir}/frame_{frame:03d}.png", image)
        frame += 1
cap.release()
