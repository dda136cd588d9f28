"""MediaPipe's Python solution on a video, as a peer for ar-demo's headless mode.

Runs in a side venv with mediapipe==0.10.14 (see mediapipe_compare.py, which
makes it); prints one JSON object: frames, FPS and per-frame latency (capture ->
frame written) for the same work ar-demo does: decode, inference, the effect
drawn on the CPU (background blur / boxes / mesh points / hand and pose skeletons),
encode.

usage: python mediapipe_peer.py EFFECT VIDEO OUT.mp4 FRAMES
"""

import json
import sys
import time

import cv2
import mediapipe as mp
import numpy as np


def skeleton(bgr, landmarks, connections, w: int, h: int) -> None:
    """Lines between connected landmarks and a dot on each, as ar-demo's skeleton draws."""
    pts = [(int(lm.x * w), int(lm.y * h)) for lm in landmarks]
    for a, b in connections:
        cv2.line(bgr, pts[a], pts[b], (0, 255, 0), 2)
    for p in pts:
        cv2.circle(bgr, p, 3, (0, 0, 255), -1)


def main() -> None:
    effect, video, out, frames = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    cap = cv2.VideoCapture(video)
    w, h = int(cap.get(cv2.CAP_PROP_FRAME_WIDTH)), int(cap.get(cv2.CAP_PROP_FRAME_HEIGHT))
    writer = cv2.VideoWriter(out, cv2.VideoWriter_fourcc(*"mp4v"), 30, (w, h))
    if effect == "segmentation":
        solution = mp.solutions.selfie_segmentation.SelfieSegmentation(model_selection=0)
    elif effect == "face-detection":
        solution = mp.solutions.face_detection.FaceDetection(model_selection=0)
    elif effect == "hands":
        solution = mp.solutions.hands.Hands(max_num_hands=2, model_complexity=1)
    elif effect == "pose":
        solution = mp.solutions.pose.Pose(model_complexity=1)
    else:
        solution = mp.solutions.face_mesh.FaceMesh(static_image_mode=False, max_num_faces=1)
    latencies = []
    start = time.perf_counter()
    n = 0
    while n < frames:
        t0 = time.perf_counter()
        ok, bgr = cap.read()
        if not ok:
            break
        res = solution.process(cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB))
        if effect == "segmentation":
            mask = res.segmentation_mask[..., None]
            blurred = cv2.GaussianBlur(bgr, (0, 0), 8)
            bgr = (bgr * mask + blurred * (1 - mask)).astype(np.uint8)
        elif effect == "face-detection":
            for det in res.detections or []:
                b = det.location_data.relative_bounding_box
                p0 = (int(b.xmin * w), int(b.ymin * h))
                cv2.rectangle(
                    bgr,
                    p0,
                    (int((b.xmin + b.width) * w), int((b.ymin + b.height) * h)),
                    (0, 255, 0),
                    2,
                )
        elif effect == "hands":
            for hand in res.multi_hand_landmarks or []:
                skeleton(bgr, hand.landmark, mp.solutions.hands.HAND_CONNECTIONS, w, h)
        elif effect == "pose":
            if res.pose_landmarks is not None:
                marks = res.pose_landmarks.landmark
                skeleton(bgr, marks, mp.solutions.pose.POSE_CONNECTIONS, w, h)
        else:
            for face in res.multi_face_landmarks or []:
                for lm in face.landmark:
                    cv2.circle(bgr, (int(lm.x * w), int(lm.y * h)), 1, (0, 255, 255), -1)
        writer.write(bgr)
        latencies.append((time.perf_counter() - t0) * 1e3)
        n += 1
    wall = time.perf_counter() - start
    writer.release()
    lat = np.array(latencies[2:] or latencies)
    print(
        json.dumps(
            {
                "frames": n,
                "fps": n / wall,
                "latency_ms": {
                    "p50": float(np.percentile(lat, 50)),
                    "p90": float(np.percentile(lat, 90)),
                },
                "mediapipe": mp.__version__,
            }
        )
    )


if __name__ == "__main__":
    main()
