"""MediaPipe 0.10.14's Python solutions timed on a clip, as a peer for engine.vision.

Runs in the side venv with mediapipe==0.10.14 (benchmarks/app/mediapipe_compare.py makes
it); imports nothing of this project. Decodes the clip's first FRAMES frames into memory
first (decode is not timed), then runs the solution over them as a video, once per pass,
and prints one JSON object: {"solution", "frames", "passes": [seconds, ...]}.

usage: python mediapipe_solutions.py SOLUTION CLIP FRAMES PASSES
"""

import json
import sys
import time

import cv2
import mediapipe as mp

SOLUTIONS = {
    "hands": lambda: mp.solutions.hands.Hands(max_num_hands=2, model_complexity=1),
    "pose": lambda: mp.solutions.pose.Pose(model_complexity=1),
    "face_mesh": lambda: mp.solutions.face_mesh.FaceMesh(max_num_faces=2),
    "holistic": lambda: mp.solutions.holistic.Holistic(model_complexity=1),
    "face_detection": lambda: mp.solutions.face_detection.FaceDetection(model_selection=0),
    "selfie_segmentation": lambda: mp.solutions.selfie_segmentation.SelfieSegmentation(),
}


def main() -> None:
    name, clip, frames, passes = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    cap = cv2.VideoCapture(clip)
    rgb = []
    while len(rgb) < frames:
        ok, bgr = cap.read()
        if not ok:
            break
        rgb.append(cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB))
    seconds = []
    for _ in range(passes):
        with SOLUTIONS[name]() as solution:  # a new graph: every pass starts untracked
            solution.process(rgb[0])  # the graph's start-up outside the timing
            t = time.perf_counter()
            for frame in rgb[1:]:
                solution.process(frame)
            seconds.append(time.perf_counter() - t)
    print(json.dumps({"solution": name, "frames": len(rgb) - 1, "passes": seconds}))


if __name__ == "__main__":
    main()
