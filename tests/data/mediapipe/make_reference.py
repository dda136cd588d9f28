"""MediaPipe 0.10.14's own Python solutions on the sample clips: the fidelity references.

- input: assets/sample.mp4 (engine/catalog/samples.py: 300 frames, 640x480) and
  tests/data/mediapipe/people.mp4 (a render of engine/catalog/people.py's assets/people.mp4,
  300 frames, 640x480, kept here: a render differs between machines)
- output: tests/data/mediapipe/sample_clip.npz (about 2 MB), the arrays below, and
  image_to_tensor.npz: MediaPipe's ImageToTensorCalculator's own tensors for the cases
  in TENSOR_CASES (the clip's first frame), as 8-bit levels; people_clip.npz (about 5 MB)
  and, printed, how many results each solution had in each of its shots;
  people_holistic_refined.npz; people_pose_variants.npz
- runs: in a side venv with mediapipe==0.10.14 (made like benchmarks/app/mediapipe_compare.py
  makes its own, or given with --mp-python); MediaPipe is never a dependency of this project
- usage: python -m tests.data.mediapipe.make_reference [--only sample|people|holistic_refined|
  pose_variants] [--frames 300] [--mp-python PATH]

The solutions, as a MediaPipe user calls them, one frame at a time in clip order (RGB):
- mp.solutions.face_detection.FaceDetection(model_selection=0): every detection;
- mp.solutions.face_mesh.FaceMesh(static_image_mode=False, max_num_faces=1,
  refine_landmarks=False): tracking as in a video (ROI from the previous landmarks);
- mp.solutions.selfie_segmentation.SelfieSegmentation(model_selection=0): the mask.

Arrays (coordinates normalised by the frame size, as MediaPipe reports them; float32):
- frame_crc32 [F] (zlib.crc32 of each decoded BGR frame: the comparison checks it decodes
  the same clip), size (w, h), mediapipe_version;
- fd_count [F]; fd_frame [D], fd_score [D], fd_box [D, 4] (xmin, ymin, xmax, ymax),
  fd_keypoints [D, 6, 2];
- fm_present [F] bool; fm_landmarks [P, 468, 3] for the frames with a face, in order;
- ss_mask_bits [F, H * W / 8] (np.packbits of mask > 0.5, row-major), ss_mask_mean [F].

The people clip (assets/people.mp4, engine/catalog/people.py: real footage in shots with
cuts) -> people_clip.npz, for the solutions the sample clip lacks, each run as on a video (one
instance, every frame in clip order; the Python API stamps frames 33333 us apart, i.e. the
clip's 30 fps):
- hands1 / hands0: Hands(static_image_mode=False, max_num_hands=2, model_complexity=1 / 0);
- pose: Pose(static_image_mode=False, model_complexity=1, smooth_landmarks=True,
  enable_segmentation=True);
- fm / fmr: FaceMesh(static_image_mode=False, max_num_faces=2, refine_landmarks=False / True);
- fd0 / fd1: FaceDetection(model_selection=0 / 1);
- ho: Holistic(static_image_mode=False, model_complexity=1, smooth_landmarks=True,
  enable_segmentation=True, refine_face_landmarks=False).
The same clip through Holistic(refine_face_landmarks=True) (otherwise as ho), its face
only (its pose and hands are ho's: the face model changes nothing else) ->
people_holistic_refined.npz: frame_crc32, size, mediapipe_version, hor_face_present [F]
and hor_face_landmarks [P, 478, 3].
Pose and Holistic (as pose and ho) run two other ways -> people_pose_variants.npz
(`--only pose_variants`: frame_crc32, size, mediapipe_version and the pose* and ho_* arrays
below, but for Holistic's mask and the masks' eighths, under a prefix):
- resync_*: new instances at each cut (engine/catalog/people.py shot_starts), so every shot
  starts from MediaPipe's fresh state, as a run of ours restarted there does;
- jitter_*: one instance each, frames stamped 33334 us apart instead of 33333 (one
  microsecond more per frame on SolutionBase's private clock, which only the filters read):
  MediaPipe against itself, the spread of its own tracking on the clip.
Other options at their defaults (confidences 0.5). Arrays, besides frame_crc32, size and
mediapipe_version as above (`people_schema` has every name, dtype and shape):
- several results a frame (K = hands1, hands0, fm, fmr, fd0, fd1): K_count [F] (MediaPipe
  may return more than max_num_*: tracked and new ones), K_frame [N] (each result's frame,
  in order), then per result: hands K_landmarks [N, 21, 3], K_world [N, 21, 3] (metres),
  K_label [N] (0 "Left", 1 "Right": MediaPipe's handedness), K_score [N]; face mesh
  K_landmarks [N, 468 or 478, 3]; face detection K_score, K_box, K_keypoints as fd_* above;
- at most one a frame (K = pose, ho_pose, ho_face, ho_left, ho_right): K_present [F], then
  over the frames with one, in order, K_landmarks: pose [., 33, 4] (x, y, z, visibility;
  0.10.14 leaves `presence` unset), face [., 468, 3], hands [., 21, 3]; pose_world and
  ho_pose_world [., 33, 3] (metres);
- masks (K = pose, ho): K_mask_present [F], then K_mask_bits [M, H * W / 8] (np.packbits of
  mask > 0.5) and K_mask_q [M, H / 8, W / 8] (the float mask area-averaged to an eighth,
  0..255: its soft values, for the segmentation smoothing).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

DATA = Path(__file__).resolve().parent  # tests/data/mediapipe
OUT = DATA / "sample_clip.npz"
TENSORS_OUT = DATA / "image_to_tensor.npz"
PEOPLE_OUT = DATA / "people_clip.npz"
HOLISTIC_REFINED_OUT = DATA / "people_holistic_refined.npz"
POSE_VARIANTS_OUT = DATA / "people_pose_variants.npz"
# people_pose_variants.npz: MediaPipe's Pose and Holistic on the people clip run two other
# ways (module docstring)
VARIANTS = ("resync", "jitter")

# ImageToTensorCalculator cases on the clip's first frame: name -> (tensor w, h, keep aspect,
# range lo, hi, border, ROI (x centre, y centre, width, height, rotation) normalised or None)
TENSOR_CASES = {
    "detection": (128, 128, True, -1.0, 1.0, "BORDER_ZERO", None),
    "segmentation": (256, 256, False, 0.0, 1.0, "BORDER_ZERO", None),
    "landmark": (192, 192, False, 0.0, 1.0, "BORDER_REPLICATE", (0.55, 0.45, 0.5, 0.66, 0.5)),
    "edge_replicate": (192, 192, False, 0.0, 1.0, "BORDER_REPLICATE",
                       (0.12, 0.85, 0.4, 0.5, -2.4)),
    "edge_zero": (192, 192, False, 0.0, 1.0, "BORDER_ZERO", (0.12, 0.85, 0.4, 0.5, -2.4)),
    "letterbox_roi": (96, 64, True, -1.0, 1.0, "BORDER_ZERO", (0.5, 0.5, 0.3, 0.6, 1.0)),
}  # fmt: skip


def worker(clip: str, out: str, frames: int) -> None:
    """Runs inside the MediaPipe venv (imports nothing of this project)."""
    import zlib

    import cv2
    import mediapipe as mp
    import numpy as np

    fd = mp.solutions.face_detection.FaceDetection(model_selection=0)
    fm = mp.solutions.face_mesh.FaceMesh(
        static_image_mode=False, max_num_faces=1, refine_landmarks=False
    )
    ss = mp.solutions.selfie_segmentation.SelfieSegmentation(model_selection=0)
    cap = cv2.VideoCapture(clip)
    crc, fd_count, fd_frame, fd_score, fd_box, fd_kp = [], [], [], [], [], []
    fm_present, fm_lm, bits, means = [], [], [], []
    size = None
    while len(crc) < frames:
        ok, bgr = cap.read()
        if not ok:
            break
        i = len(crc)
        size = (bgr.shape[1], bgr.shape[0])
        crc.append(zlib.crc32(np.ascontiguousarray(bgr).tobytes()))
        rgb = cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB)
        dets = fd.process(rgb).detections or []
        fd_count.append(len(dets))
        for d in dets:
            b = d.location_data.relative_bounding_box
            fd_frame.append(i)
            fd_score.append(d.score[0])
            fd_box.append([b.xmin, b.ymin, b.xmin + b.width, b.ymin + b.height])
            fd_kp.append([[k.x, k.y] for k in d.location_data.relative_keypoints])
        faces = fm.process(rgb).multi_face_landmarks or []
        fm_present.append(bool(faces))
        if faces:
            fm_lm.append([[p.x, p.y, p.z] for p in faces[0].landmark])
        mask = ss.process(rgb).segmentation_mask
        bits.append(np.packbits((mask > 0.5).reshape(-1)))
        means.append(float(mask.mean()))
    cap.release()
    f32 = np.float32
    np.savez_compressed(
        out,
        mediapipe_version=np.array(mp.__version__),
        size=np.array(size, np.int32),
        frame_crc32=np.array(crc, np.uint32),
        fd_count=np.array(fd_count, np.int32),
        fd_frame=np.array(fd_frame, np.int32),
        fd_score=np.array(fd_score, f32),
        fd_box=np.array(fd_box, f32).reshape(-1, 4),
        fd_keypoints=np.array(fd_kp, f32).reshape(-1, 6, 2),
        fm_present=np.array(fm_present, bool),
        fm_landmarks=np.array(fm_lm, f32).reshape(-1, 468, 3),
        ss_mask_bits=np.array(bits, np.uint8),
        ss_mask_mean=np.array(means, f32),
    )
    print(f"{len(crc)} frames -> {out}")


def people_schema(w: int, h: int) -> dict[str, tuple[str, tuple[int, ...]]]:
    """Every array of people_clip.npz but the three shared ones: name -> (dtype, shape of one
    entry); arrays with no entry (nothing detected) are stored empty with that shape."""
    schema = {}
    for k in ("hands1", "hands0"):
        schema |= {f"{k}_count": ("int32", ()), f"{k}_frame": ("int32", ()),
                   f"{k}_landmarks": ("float32", (21, 3)), f"{k}_world": ("float32", (21, 3)),
                   f"{k}_label": ("uint8", ()), f"{k}_score": ("float32", ())}  # fmt: skip
    for k, n in (("fm", 468), ("fmr", 478)):
        schema |= {f"{k}_count": ("int32", ()), f"{k}_frame": ("int32", ()),
                   f"{k}_landmarks": ("float32", (n, 3))}  # fmt: skip
    for k in ("fd0", "fd1"):
        schema |= {f"{k}_count": ("int32", ()), f"{k}_frame": ("int32", ()),
                   f"{k}_score": ("float32", ()), f"{k}_box": ("float32", (4,)),
                   f"{k}_keypoints": ("float32", (6, 2))}  # fmt: skip
    for k, shape in (("pose", (33, 4)), ("ho_pose", (33, 4)), ("ho_face", (468, 3)),
                     ("ho_left", (21, 3)), ("ho_right", (21, 3))):  # fmt: skip
        schema |= {f"{k}_present": ("bool", ()), f"{k}_landmarks": ("float32", shape)}
    schema |= {"pose_world": ("float32", (33, 3)), "ho_pose_world": ("float32", (33, 3))}
    for k in ("pose", "ho"):
        schema |= {f"{k}_mask_present": ("bool", ()), f"{k}_mask_bits": ("uint8", (w * h // 8,)),
                   f"{k}_mask_q": ("uint8", (h // 8, w // 8))}  # fmt: skip
    return schema


def people_worker(clip: str, out: str, frames: int) -> None:
    """Runs inside the MediaPipe venv: the people clip through every solution of the module
    docstring, one instance each, frames in clip order (imports nothing of this project)."""
    import time
    import zlib

    import cv2
    import mediapipe as mp
    import numpy as np

    s = mp.solutions
    video = {"static_image_mode": False}
    solutions = {
        "hands1": s.hands.Hands(**video, max_num_hands=2, model_complexity=1),
        "hands0": s.hands.Hands(**video, max_num_hands=2, model_complexity=0),
        "pose": s.pose.Pose(**video, model_complexity=1, smooth_landmarks=True,
                            enable_segmentation=True),
        "fm": s.face_mesh.FaceMesh(**video, max_num_faces=2, refine_landmarks=False),
        "fmr": s.face_mesh.FaceMesh(**video, max_num_faces=2, refine_landmarks=True),
        "fd0": s.face_detection.FaceDetection(model_selection=0),
        "fd1": s.face_detection.FaceDetection(model_selection=1),
        "ho": s.holistic.Holistic(**video, model_complexity=1, smooth_landmarks=True,
                                  enable_segmentation=True, refine_face_landmarks=False),
    }  # fmt: skip
    rec: dict[str, list] = {}
    seconds = dict.fromkeys(solutions, 0.0)

    def add(key, value):
        rec.setdefault(key, []).append(value)

    def xyz(lms):
        return [[p.x, p.y, p.z] for p in lms.landmark]

    def xyzv(lms):  # 0.10.14 leaves `presence` unset on every pose landmark: not stored
        return [[p.x, p.y, p.z, p.visibility] for p in lms.landmark]

    def one(key, lms, fields):  # at most one result a frame: K_present, K_landmarks
        add(f"{key}_present", lms is not None)
        if lms is not None:
            add(f"{key}_landmarks", fields(lms))

    def mask(key, m):
        add(f"{key}_mask_present", m is not None)
        if m is not None:
            add(f"{key}_mask_bits", np.packbits((m > 0.5).reshape(-1)))
            q = cv2.resize(m, (m.shape[1] // 8, m.shape[0] // 8), interpolation=cv2.INTER_AREA)
            add(f"{key}_mask_q", np.rint(np.clip(q, 0.0, 1.0) * 255).astype(np.uint8))

    cap = cv2.VideoCapture(clip)
    crc, size = [], None
    while len(crc) < frames:
        ok, bgr = cap.read()
        if not ok:
            break
        i = len(crc)
        size = (bgr.shape[1], bgr.shape[0])
        crc.append(zlib.crc32(np.ascontiguousarray(bgr).tobytes()))
        rgb = cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB)
        res = {}
        for key, solution in solutions.items():
            t0 = time.perf_counter()
            res[key] = solution.process(rgb)
            seconds[key] += time.perf_counter() - t0
        for key in ("hands1", "hands0"):
            r = res[key]
            hands = list(zip(r.multi_hand_landmarks or [], r.multi_hand_world_landmarks or [],
                             r.multi_handedness or [], strict=True))  # fmt: skip
            add(f"{key}_count", len(hands))
            for lms, world, handed in hands:
                add(f"{key}_frame", i)
                add(f"{key}_landmarks", xyz(lms))
                add(f"{key}_world", xyz(world))
                add(f"{key}_label", ["Left", "Right"].index(handed.classification[0].label))
                add(f"{key}_score", handed.classification[0].score)
        for key in ("pose", "ho"):
            r = res[key]
            one(f"{key}_pose" if key == "ho" else key, r.pose_landmarks, xyzv)
            if r.pose_landmarks is not None:
                add(f"{key}_pose_world" if key == "ho" else "pose_world",
                    xyz(r.pose_world_landmarks))  # fmt: skip
            mask(key, r.segmentation_mask)
        for key in ("fm", "fmr"):
            faces = res[key].multi_face_landmarks or []
            add(f"{key}_count", len(faces))
            for lms in faces:
                add(f"{key}_frame", i)
                add(f"{key}_landmarks", xyz(lms))
        for key in ("fd0", "fd1"):
            dets = res[key].detections or []
            add(f"{key}_count", len(dets))
            for d in dets:
                b = d.location_data.relative_bounding_box
                add(f"{key}_frame", i)
                add(f"{key}_score", d.score[0])
                add(f"{key}_box", [b.xmin, b.ymin, b.xmin + b.width, b.ymin + b.height])
                add(f"{key}_keypoints", [[k.x, k.y] for k in d.location_data.relative_keypoints])
        one("ho_face", res["ho"].face_landmarks, xyz)
        one("ho_left", res["ho"].left_hand_landmarks, xyz)
        one("ho_right", res["ho"].right_hand_landmarks, xyz)
    cap.release()
    f, (w, h) = len(crc), size
    arrays = {"mediapipe_version": np.array(mp.__version__), "size": np.array(size, np.int32),
              "frame_crc32": np.array(crc, np.uint32)}  # fmt: skip
    for name, (dtype, shape) in people_schema(w, h).items():
        arrays[name] = np.array(rec.get(name, []), dtype).reshape(-1, *shape)
    np.savez_compressed(out, **arrays)
    per_frame = ", ".join(f"{k} {1000 * t / max(f, 1):.1f}" for k, t in seconds.items())
    print(f"{f} frames -> {out}; ms per frame: {per_frame}")


def tensors_worker(clip: str, out: str) -> None:
    """MediaPipe's own ImageToTensorCalculator (its CPU converter) on the clip's first frame,
    read out through TensorsToFloatsCalculator; runs inside the MediaPipe venv."""
    import cv2
    import mediapipe as mp
    import mediapipe.calculators.tensor.image_to_tensor_calculator_pb2  # noqa: F401 (options)
    import numpy as np
    from google.protobuf import text_format
    from mediapipe.framework import calculator_pb2
    from mediapipe.framework.formats import rect_pb2
    from mediapipe.python import packet_creator, packet_getter
    from mediapipe.python._framework_bindings import calculator_graph, image_frame

    cap = cv2.VideoCapture(clip)
    ok, bgr = cap.read()
    cap.release()
    rgb = np.ascontiguousarray(cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB))
    arrays = {"mediapipe_version": np.array(mp.__version__), "frame_size": [640, 480]}
    for name, (w, h, keep, lo, hi, border, roi) in TENSOR_CASES.items():
        config = text_format.Parse(
            f"""
            input_stream: "image" {'input_stream: "roi"' if roi else ""} output_stream: "floats"
            node {{ calculator: "ImageToTensorCalculator" input_stream: "IMAGE:image"
              {'input_stream: "NORM_RECT:roi"' if roi else ""} output_stream: "TENSORS:tensors"
              options {{ [mediapipe.ImageToTensorCalculatorOptions.ext] {{
                output_tensor_width: {w} output_tensor_height: {h}
                keep_aspect_ratio: {str(keep).lower()}
                output_tensor_float_range {{ min: {lo} max: {hi} }} border_mode: {border} }} }} }}
            node {{ calculator: "TensorsToFloatsCalculator" input_stream: "TENSORS:tensors"
              output_stream: "FLOATS:floats" }}""",
            calculator_pb2.CalculatorGraphConfig(),
        )
        graph = calculator_graph.CalculatorGraph(graph_config=config)
        got = []
        graph.observe_output_stream(
            "floats", lambda _s, p, got=got: got.append(np.array(packet_getter.get_float_list(p)))
        )
        graph.start_run()
        image = packet_creator.create_image_frame(image_format=image_frame.ImageFormat.SRGB,
                                                  data=rgb)  # fmt: skip
        graph.add_packet_to_input_stream("image", image.at(0))
        if roi:
            rect = rect_pb2.NormalizedRect(x_center=roi[0], y_center=roi[1], width=roi[2],
                                           height=roi[3], rotation=roi[4])  # fmt: skip
            graph.add_packet_to_input_stream("roi", packet_creator.create_proto(rect).at(0))
        graph.close()
        levels = np.rint((got[0] - lo) / (hi - lo) * 255.0)  # 8-bit values, exactly
        arrays[name] = levels.astype(np.uint8).reshape(h, w, 3)
    np.savez_compressed(out, **arrays)
    print(f"{len(TENSOR_CASES)} image-to-tensor cases -> {out}")


def people_summary(ref: dict) -> str:
    """A markdown table: for each shot of the people clip, how many frames had 0, 1, 2 or
    more results of each solution (what the clip exercises: tracking, loss, cuts)."""
    from engine.catalog.people import SHOTS, shot_starts

    cols = ["hands1", "hands0", "pose", "fm", "fmr", "fd0", "fd1", "ho_pose", "ho_face",
            "ho_left", "ho_right"]  # fmt: skip
    per_frame = {k: ref[f"{k}_count"] if f"{k}_count" in ref else ref[f"{k}_present"].astype(int)
                 for k in cols}  # fmt: skip
    lines = ["| frames | shot | " + " | ".join(cols) + " |", "|---|---|" + "---:|" * len(cols)]
    starts = shot_starts()
    n = len(ref["frame_crc32"])
    for shot, a, b in zip(SHOTS, starts[:-1], starts[1:], strict=True):
        b = min(b, n)
        if a >= b:
            break
        cells = []
        for k in cols:
            c = per_frame[k][a:b]
            counts = [int((c == v).sum()) for v in range(3)] + [int((c > 2).sum())]
            cells.append("/".join(map(str, counts if counts[3] else counts[:3])))
        lines.append(f"| {a}-{b - 1} | {shot.source} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def holistic_refined_worker(clip: str, out: str, frames: int) -> None:
    """Runs inside the MediaPipe venv: Holistic with refine_face_landmarks=True on the
    people clip, frames in clip order; its face landmarks (imports nothing of this project)."""
    import zlib

    import cv2
    import mediapipe as mp
    import numpy as np

    holistic = mp.solutions.holistic.Holistic(
        static_image_mode=False, model_complexity=1, smooth_landmarks=True,
        enable_segmentation=True, refine_face_landmarks=True,
    )  # fmt: skip
    cap = cv2.VideoCapture(clip)
    crc, present, landmarks, size = [], [], [], None
    while len(crc) < frames:
        ok, bgr = cap.read()
        if not ok:
            break
        size = (bgr.shape[1], bgr.shape[0])
        crc.append(zlib.crc32(np.ascontiguousarray(bgr).tobytes()))
        face = holistic.process(cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB)).face_landmarks
        present.append(face is not None)
        if face is not None:
            landmarks.append([[p.x, p.y, p.z] for p in face.landmark])
    cap.release()
    np.savez_compressed(
        out, mediapipe_version=np.array(mp.__version__), size=np.array(size, np.int32),
        frame_crc32=np.array(crc, np.uint32), hor_face_present=np.array(present, bool),
        hor_face_landmarks=np.array(landmarks, np.float32).reshape(-1, 478, 3),
    )  # fmt: skip
    print(f"{len(crc)} frames, a face on {sum(present)} -> {out}")


def variant_keys(w: int, h: int) -> dict[str, tuple[str, tuple[int, ...]]]:
    """people_pose_variants.npz's arrays, each under both prefixes: people_schema's pose and
    ho_* arrays but the masks' eighths (and Holistic's mask, which no comparison reads)."""
    keep = {k: v for k, v in people_schema(w, h).items()
            if (k.startswith("pose") or k.startswith("ho_")) and "mask_q" not in k}  # fmt: skip
    return {f"{variant}_{k}": v for variant in VARIANTS for k, v in keep.items()}


def pose_variants_worker(rgb_file: str, out: str, cuts: str) -> None:
    """Runs inside the MediaPipe venv: Pose and Holistic as people_worker runs them, in the
    VARIANTS (module docstring) on the clip's RGB frames (an .npz with `rgb` and
    `frame_crc32` that the caller decoded and checked: this venv's OpenCV need not read
    the clip); imports nothing of this project."""
    import mediapipe as mp
    import numpy as np

    with np.load(rgb_file) as given:
        frames, crc = given["rgb"], given["frame_crc32"]
    starts = {int(c) for c in cuts.split(",")}
    h, w = frames.shape[1:3]
    rec: dict[str, list] = {}

    def add(key, value):
        rec.setdefault(key, []).append(value)

    def one(key, lms, fields):
        add(f"{key}_present", lms is not None)
        if lms is not None:
            add(f"{key}_landmarks", [fields(p) for p in lms.landmark])

    def solutions():
        return {
            "pose": mp.solutions.pose.Pose(static_image_mode=False, model_complexity=1,
                                           smooth_landmarks=True, enable_segmentation=True),
            "ho": mp.solutions.holistic.Holistic(
                static_image_mode=False, model_complexity=1, smooth_landmarks=True,
                enable_segmentation=True, refine_face_landmarks=False),
        }  # fmt: skip

    for variant in VARIANTS:
        live: dict = {}
        for i, rgb in enumerate(frames):
            if not live or (variant == "resync" and i in starts):
                for s in live.values():
                    s.close()
                live = solutions()
            pose, ho = (s.process(rgb) for s in live.values())
            if variant == "jitter":  # SolutionBase adds 33333 us a process(): one more
                for s in live.values():
                    s._simulated_timestamp += 1
            for key, r in (("pose", pose), ("ho_pose", ho)):
                one(f"{variant}_{key}", r.pose_landmarks, lambda p: [p.x, p.y, p.z, p.visibility])
                if r.pose_landmarks is not None:
                    world = [[p.x, p.y, p.z] for p in r.pose_world_landmarks.landmark]
                    add(f"{variant}_{key}_world", world)
            add(f"{variant}_pose_mask_present", pose.segmentation_mask is not None)
            if pose.segmentation_mask is not None:
                bits = np.packbits((pose.segmentation_mask > 0.5).reshape(-1))
                add(f"{variant}_pose_mask_bits", bits)
            for part in ("face", "left", "right"):
                attr = "face_landmarks" if part == "face" else f"{part}_hand_landmarks"
                one(f"{variant}_ho_{part}", getattr(ho, attr), lambda p: [p.x, p.y, p.z])
        for s in live.values():
            s.close()
    arrays = {"mediapipe_version": np.array(mp.__version__), "size": np.array((w, h), np.int32),
              "frame_crc32": crc}  # fmt: skip
    for name, (dtype, shape) in variant_keys(w, h).items():
        arrays[name] = np.array(rec.get(name, []), dtype).reshape(-1, *shape)
    np.savez_compressed(out, **arrays)
    print(f"{len(frames)} frames, {' and '.join(VARIANTS)} -> {out}")


# name -> (clip, reference file): the sample clip from the assets dir, the people clip kept
# beside its references (benchmarks/fidelity/compare.py PEOPLE_CLIP says why)
PEOPLE_CLIP = DATA / "people.mp4"
REFERENCES = {"sample": ("sample.mp4", OUT), "people": (PEOPLE_CLIP, PEOPLE_OUT),
              "holistic_refined": (PEOPLE_CLIP, HOLISTIC_REFINED_OUT),
              "pose_variants": (PEOPLE_CLIP, POSE_VARIANTS_OUT)}  # fmt: skip


def run_pose_variants(python: str, clip: str, out: str, frames: int) -> int:
    """pose_variants_worker in the MediaPipe venv on the clip's frames, decoded here and
    checked against people_clip.npz's CRCs; the worker's exit status."""
    import tempfile

    import numpy as np

    from benchmarks.fidelity.compare import clip_frames, load_reference
    from engine.catalog.people import shot_starts

    crc = load_reference(PEOPLE_OUT)["frame_crc32"][:frames]
    rgb = np.stack(clip_frames(clip, crc, len(crc)))
    cuts = ",".join(str(s) for s in shot_starts()[:-1])
    with tempfile.TemporaryDirectory() as tmp:
        given = Path(tmp) / "frames.npz"
        np.savez(given, rgb=rgb, frame_crc32=crc)
        cmd = [python, __file__, "--worker", "pose_variants", "--clip", str(given), "--out",
               out, "--cuts", cuts]  # fmt: skip
        return subprocess.run(cmd).returncode


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", choices=sorted(REFERENCES), help="make one (default: all)")
    ap.add_argument("--frames", type=int, default=300)
    ap.add_argument("--clip", default=None, help="with --only: another clip than the assets'")
    ap.add_argument("--out", default=None, help="with --only: another file than the default")
    ap.add_argument("--mp-python", default=None, help="python of a venv with mediapipe==0.10.14")
    ap.add_argument("--worker", choices=sorted(REFERENCES), help=argparse.SUPPRESS)
    ap.add_argument("--cuts", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker == "sample":
        worker(args.clip, args.out, args.frames)
        tensors_worker(args.clip, str(Path(args.out).parent / TENSORS_OUT.name))
        return 0
    if args.worker == "people":
        people_worker(args.clip, args.out, args.frames)
        return 0
    if args.worker == "holistic_refined":
        holistic_refined_worker(args.clip, args.out, args.frames)
        return 0
    if args.worker == "pose_variants":
        pose_variants_worker(args.clip, args.out, args.cuts)
        return 0
    if (args.clip or args.out) and not args.only:
        ap.error("--clip and --out need --only")
    from benchmarks.app.mediapipe_compare import mediapipe_python
    from engine.catalog.paths import assets_dir

    python = mediapipe_python(args.mp_python)
    for name in [args.only] if args.only else list(REFERENCES):
        clip = args.clip or str(assets_dir() / REFERENCES[name][0])  # absolute: itself
        out = args.out or str(REFERENCES[name][1])
        if not Path(clip).is_file():
            print(f"{clip} missing: run `engine-fetch samples`", file=sys.stderr)
            return 2
        Path(out).parent.mkdir(parents=True, exist_ok=True)
        if name == "pose_variants":
            if run_pose_variants(python, clip, out, args.frames):
                return 1
            continue
        cmd = [python, __file__, "--worker", name, "--clip", clip, "--out", out,
               "--frames", str(args.frames)]  # fmt: skip
        if subprocess.run(cmd).returncode:
            return 1
        if name == "people":
            import numpy as np

            with np.load(out) as ref:
                print(people_summary({k: ref[k] for k in ref.files}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
