"""The drop-in for MediaPipe 0.10.14's Python solutions: `from engine.vision import mediapipe
as mp`, and a script written for `import mediapipe as mp` runs unchanged.

- input: what MediaPipe's solutions take: RGB uint8 numpy images, one `process()` each
- output: what they return: `results.multi_hand_landmarks[0].landmark[8].x`,
  `results.multi_handedness[0].classification[0].label`, `detection.location_data.
  relative_bounding_box.xmin`, `results.segmentation_mask`, ..., MediaPipe's own protobuf
  messages (messages.py) with the same fields set, None where MediaPipe gives None
- what runs: engine.vision's solutions (webgpu on a GPU, XNNPACK on the CPU: backend
  "auto"); `mp.engine_options(backend=..., num_threads=..., ...)` sets their engine options
  (solution_base.py); drawing is engine.vision.drawing's, pixel-equal to MediaPipe's
- names: `mp.solutions.<module>` for face_detection, face_mesh, face_mesh_connections,
  hands, hands_connections, pose, pose_connections, holistic, selfie_segmentation,
  drawing_utils, drawing_styles, objectron, each with MediaPipe's public names and
  signatures (docs/mediapipe.md has the table); MediaPipe's other top-level names (tasks,
  Image, ...) are not here
- usage:
    from engine.vision import mediapipe as mp
    mp_hands, mp_drawing = mp.solutions.hands, mp.solutions.drawing_utils
    with mp_hands.Hands(max_num_hands=2) as hands:
        results = hands.process(rgb)
        for hand in results.multi_hand_landmarks or []:
            mp_drawing.draw_landmarks(bgr, hand, mp_hands.HAND_CONNECTIONS)
"""

from engine.vision.mediapipe import solutions
from engine.vision.mediapipe.solution_base import engine_options

__all__ = ["engine_options", "solutions"]
