"""MediaPipe 0.10.14's own Python solutions on the sample clips: the fidelity references.

- input: assets/sample.mp4 (engine/catalog/samples.py: 300 frames, 640x480) and
  tests/data/mediapipe/people.mp4 (a render of engine/catalog/people.py's assets/people.mp4,
  300 frames, 640x480, kept here: a render differs between machines)
- output: tests/data/mediapipe/sample_clip.npz (about 2 MB), the arrays below, and
  image_to_tensor.npz: MediaPipe's ImageToTensorCalculator's own tensors for the cases
  in TENSOR_CASES (the clip's first frame), as 8-bit levels; people_clip.npz (about 5 MB)
  and, printed, how many results each solution had in each of its shots;
  people_holistic_refined.npz; people_pose_variants.npz; people_options.npz (2.6 MB);
  people_perturbed.npz (4.8 MB) and people_perturbed_faces.npz (3.9 MB);
  people_holistic_hand_rois.npz
- runs: in a side venv with mediapipe==0.10.14 (made like benchmarks/app/mediapipe_compare.py
  makes its own, or given with --mp-python); MediaPipe is never a dependency of this project.
  Pose and Holistic with model_complexity 0 and 2 need pose_landmark_lite / _heavy.tflite in
  the venv's mediapipe/modules/pose_landmark/: MediaPipe's Python API downloads them there
  the first time (solutions/download_utils.py, which skips the download when the file is
  there), so frames_worker copies the project's (models/, from the npm registry's
  @mediapipe/pose, whose pose_landmark_full is the wheel's byte for byte) where they are
  missing, and no download is tried
- usage: python -m tests.data.mediapipe.make_reference [--only sample|people|holistic_refined|
  pose_variants|options|perturbed|perturbed_faces|holistic_hand_rois] [--frames 300]
  [--mp-python PATH]

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

The options people_clip.npz lacks, on the same frames (RUNS names each; `solution_schema`
its arrays, under its key as above) -> people_options.npz (`--only options`):
- pose0 / pose2: Pose as pose with model_complexity 0 / 2 (K_present, K_landmarks, K_world,
  K_mask_present, K_mask_bits);
- ho0 / ho2: Holistic as ho with model_complexity 0 / 2: its pose (K_pose_*) and hands
  (K_left_*, K_right_*); its face is not kept (the face model reads the frame inside a face
  detection, the pose only saying where to look; 1.2 MB a run);
- ss0 / ss1: SelfieSegmentation(model_selection=0 / 1): K_mask_bits [F, H * W / 8].

The perturbed clip: the same frames with two pixels of each changed by one 8-bit level
(`perturbation`: two distinct positions a frame drawn uniformly by numpy's
default_rng(PERTURB_SEED), and a step of +1 or -1 for each; `perturb`: each channel of the
pixel moves by its step, or the other way where the step would leave 0..255). Every run
above (people_clip.npz's, hor, and people_options.npz's) again on it, as it is there ->
people_perturbed.npz (`--only perturbed`; the face meshes fm, fmr and hor ->
people_perturbed_faces.npz, `--only perturbed_faces`), each with the perturbation's
record: perturb_seed, perturb_positions [F, 2, 2] (row, column), perturb_steps [F, 2],
perturbed_crc32 [F] (the perturbed frames' CRCs, as BGR like frame_crc32). MediaPipe's
disagreement with its own run on the clip is the fidelity yardstick's floor
(benchmarks/fidelity/yardstick.py). The same frames give MediaPipe's results on the clip
itself exactly (run again, people_clip.npz comes out the same but for the handedness
scores' last bit): what moves under the perturbation is MediaPipe's response to it.

Holistic as ho, its graph given its hand subgraph's debug outputs ->
people_holistic_hand_rois.npz (`--only holistic_hand_rois`): hh_{left,right}_hand_
{roi_from_pose, roi_from_recrop, tracking_roi} [F, 5] (x centre, y centre, width, height,
rotation; NaN where the graph made none), and its hh_pose_* and hh_{left,right}_hand_*
(present [F], landmarks [P, ., 3]: people_clip.npz's ho_* again, the check that it is the
same run); the same on the perturbed clip under px_hh_* (people_perturbed.npz's ho_*),
with the perturbation's perturb_seed, perturb_positions and perturb_steps.
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
HAND_ROIS_OUT = DATA / "people_holistic_hand_rois.npz"
POSE_VARIANTS_OUT = DATA / "people_pose_variants.npz"
OPTIONS_OUT = DATA / "people_options.npz"
PERTURBED_OUT = DATA / "people_perturbed.npz"
PERTURBED_FACES_OUT = DATA / "people_perturbed_faces.npz"
# The perturbation whose effect on MediaPipe is the fidelity yardstick's floor: two pixels of
# each frame one 8-bit level up or down (`perturbation`, `perturb`); any fixed seed would do,
# the pixels and steps it gave are stored with the run
PERTURB_SEED = 1
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


# Each solution a recording names, as MediaPipe's Python API makes it: key -> (family,
# option); `solution_schema` names the arrays each family records under its key
RUNS = {
    "hands1": ("hands", 1), "hands0": ("hands", 0),
    "pose": ("pose", 1), "pose0": ("pose", 0), "pose2": ("pose", 2),
    "fm": ("face_mesh", False), "fmr": ("face_mesh", True),
    "fd0": ("face_detection", 0), "fd1": ("face_detection", 1),
    "ho": ("holistic", 1), "ho0": ("holistic", 0), "ho2": ("holistic", 2),
    "hor": ("holistic_refined", 1),
    "ss0": ("selfie_segmentation", 0), "ss1": ("selfie_segmentation", 1),
}  # fmt: skip
PEOPLE_RUNS = ("hands1", "hands0", "pose", "fm", "fmr", "fd0", "fd1", "ho")
MASK_EIGHTHS = ("pose", "ho")  # people_clip.npz's masks with their eighths
# people_options.npz: the options people_clip.npz lacks (their models: pose_landmark_lite and
# _heavy for model_complexity 0 and 2, selfie_segmentation_landscape for model_selection 1)
OPTION_RUNS = ("pose0", "pose2", "ho0", "ho2", "ss0", "ss1")
# people_perturbed.npz and people_perturbed_faces.npz (the face meshes: 4 MB together):
# every run of people_clip.npz, people_holistic_refined.npz and people_options.npz again on
# the perturbed frames
PERTURBED_FACE_RUNS = ("fm", "fmr", "hor")
PERTURBED_RUNS = tuple(k for k in (*PEOPLE_RUNS, *OPTION_RUNS) if k not in PERTURBED_FACE_RUNS)
# Holistic's face is recorded for "ho" only: with model_complexity 0 or 2 the face model
# still reads the frame inside a face detection, the pose only saying where to look (and
# 1.2 MB a run)
HOLISTIC_FACE = ("ho",)


def solution_schema(key: str, w: int, h: int, eighths: bool = False) -> dict:
    """The arrays a recording of RUNS[key] holds: name -> (dtype, shape of one entry);
    `eighths`: its mask's eighths too (people_clip.npz's Pose and Holistic)."""
    family, option = RUNS[key]
    if family == "hands":
        return {f"{key}_count": ("int32", ()), f"{key}_frame": ("int32", ()),
                f"{key}_landmarks": ("float32", (21, 3)), f"{key}_world": ("float32", (21, 3)),
                f"{key}_label": ("uint8", ()), f"{key}_score": ("float32", ())}  # fmt: skip
    if family == "face_mesh":
        return {f"{key}_count": ("int32", ()), f"{key}_frame": ("int32", ()),
                f"{key}_landmarks": ("float32", (478 if option else 468, 3))}  # fmt: skip
    if family == "face_detection":
        return {f"{key}_count": ("int32", ()), f"{key}_frame": ("int32", ()),
                f"{key}_score": ("float32", ()), f"{key}_box": ("float32", (4,)),
                f"{key}_keypoints": ("float32", (6, 2))}  # fmt: skip
    if family == "selfie_segmentation":
        return {f"{key}_mask_bits": ("uint8", (w * h // 8,))}
    if family == "holistic_refined":
        return {f"{key}_face_present": ("bool", ()), f"{key}_face_landmarks": ("float32", (478, 3))}
    schema = {}
    if family == "holistic":
        parts = {"left": (21, 3), "right": (21, 3)}
        if key in HOLISTIC_FACE:
            parts["face"] = (468, 3)
        for part, shape in parts.items():
            schema |= {f"{key}_{part}_present": ("bool", ()),
                       f"{key}_{part}_landmarks": ("float32", shape)}  # fmt: skip
    body = f"{key}_pose" if family == "holistic" else key
    schema |= {f"{body}_present": ("bool", ()), f"{body}_landmarks": ("float32", (33, 4)),
               f"{body}_world": ("float32", (33, 3))}  # fmt: skip
    if family == "pose" or eighths:  # Holistic's mask: people_clip.npz's only (none reads it)
        schema |= {f"{key}_mask_present": ("bool", ()),
                   f"{key}_mask_bits": ("uint8", (w * h // 8,))}  # fmt: skip
    if eighths:
        schema[f"{key}_mask_q"] = ("uint8", (h // 8, w // 8))
    return schema


def people_schema(w: int, h: int) -> dict[str, tuple[str, tuple[int, ...]]]:
    """Every array of people_clip.npz but the three shared ones: name -> (dtype, shape of one
    entry); arrays with no entry (nothing detected) are stored empty with that shape."""
    schema = {}
    for key in PEOPLE_RUNS:
        schema |= solution_schema(key, w, h, eighths=key in MASK_EIGHTHS)
    return schema


def record_runs(frames, keys, w: int, h: int, eighths=()) -> tuple[dict, dict]:
    """Runs inside the MediaPipe venv: RUNS[key] for each of `keys`, one instance each, over
    `frames` (RGB, in clip order: the Python API stamps them 33333 us apart, the clip's 30
    fps); (the arrays of solution_schema, seconds per key). `eighths`: the keys whose
    masks keep their eighths (and Holistic's its mask). Imports nothing of this project."""
    import time

    import cv2
    import mediapipe as mp
    import numpy as np

    s = mp.solutions
    video = {"static_image_mode": False}
    make = {
        "hands": lambda c: s.hands.Hands(**video, max_num_hands=2, model_complexity=c),
        "pose": lambda c: s.pose.Pose(**video, model_complexity=c, smooth_landmarks=True,
                                      enable_segmentation=True),
        "face_mesh": lambda r: s.face_mesh.FaceMesh(**video, max_num_faces=2,
                                                    refine_landmarks=r),
        "face_detection": lambda m: s.face_detection.FaceDetection(model_selection=m),
        "holistic": lambda c: s.holistic.Holistic(**video, model_complexity=c,
                                                  smooth_landmarks=True, enable_segmentation=True,
                                                  refine_face_landmarks=False),
        "holistic_refined": lambda c: s.holistic.Holistic(
            **video, model_complexity=c, smooth_landmarks=True, enable_segmentation=True,
            refine_face_landmarks=True),
        "selfie_segmentation": lambda m: s.selfie_segmentation.SelfieSegmentation(
            model_selection=m),
    }  # fmt: skip
    solutions = {key: make[RUNS[key][0]](RUNS[key][1]) for key in keys}
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
            if key in eighths:
                q = cv2.resize(m, (m.shape[1] // 8, m.shape[0] // 8),
                               interpolation=cv2.INTER_AREA)  # fmt: skip
                add(f"{key}_mask_q", np.rint(np.clip(q, 0.0, 1.0) * 255).astype(np.uint8))

    for i, rgb in enumerate(frames):
        for key, solution in solutions.items():
            t0 = time.perf_counter()
            r = solution.process(rgb)
            seconds[key] += time.perf_counter() - t0
            family = RUNS[key][0]
            if family == "hands":
                found = zip(r.multi_hand_landmarks or [], r.multi_hand_world_landmarks or [],
                            r.multi_handedness or [], strict=True)  # fmt: skip
                n = 0
                for lms, world, handed in found:
                    n += 1
                    add(f"{key}_frame", i)
                    add(f"{key}_landmarks", xyz(lms))
                    add(f"{key}_world", xyz(world))
                    add(f"{key}_label", ["Left", "Right"].index(handed.classification[0].label))
                    add(f"{key}_score", handed.classification[0].score)
                add(f"{key}_count", n)
            elif family in ("pose", "holistic"):
                body = f"{key}_pose" if family == "holistic" else key
                one(body, r.pose_landmarks, xyzv)
                if r.pose_landmarks is not None:
                    add(f"{body}_world", xyz(r.pose_world_landmarks))
                if family == "pose" or key in eighths:
                    mask(key, r.segmentation_mask)
                if family == "holistic":
                    if key in HOLISTIC_FACE:
                        one(f"{key}_face", r.face_landmarks, xyz)
                    one(f"{key}_left", r.left_hand_landmarks, xyz)
                    one(f"{key}_right", r.right_hand_landmarks, xyz)
            elif family == "holistic_refined":
                one(f"{key}_face", r.face_landmarks, xyz)
            elif family == "face_mesh":
                faces = r.multi_face_landmarks or []
                add(f"{key}_count", len(faces))
                for lms in faces:
                    add(f"{key}_frame", i)
                    add(f"{key}_landmarks", xyz(lms))
            elif family == "face_detection":
                dets = r.detections or []
                add(f"{key}_count", len(dets))
                for d in dets:
                    b = d.location_data.relative_bounding_box
                    add(f"{key}_frame", i)
                    add(f"{key}_score", d.score[0])
                    add(f"{key}_box", [b.xmin, b.ymin, b.xmin + b.width, b.ymin + b.height])
                    add(f"{key}_keypoints",
                        [[k.x, k.y] for k in d.location_data.relative_keypoints])  # fmt: skip
            else:  # selfie segmentation: a mask every frame
                add(f"{key}_mask_bits", np.packbits((r.segmentation_mask > 0.5).reshape(-1)))
    for solution in solutions.values():
        solution.close()
    arrays = {}
    for key in keys:
        for name, (dtype, shape) in solution_schema(key, w, h, key in eighths).items():
            arrays[name] = np.array(rec.get(name, []), dtype).reshape(-1, *shape)
    return arrays, seconds


def decode_clip(clip: str, frames: int) -> tuple:
    """Runs inside the MediaPipe venv: the clip's first `frames` frames, (the CRC32 of each
    decoded BGR frame, the frames as RGB)."""
    import zlib

    import cv2
    import numpy as np

    cap = cv2.VideoCapture(clip)
    crc, rgb = [], []
    while len(crc) < frames:
        ok, bgr = cap.read()
        if not ok:
            break
        crc.append(zlib.crc32(np.ascontiguousarray(bgr).tobytes()))
        rgb.append(cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB))
    cap.release()
    return np.array(crc, np.uint32), rgb


def people_worker(clip: str, out: str, frames: int) -> None:
    """Runs inside the MediaPipe venv: the people clip through PEOPLE_RUNS (module
    docstring), frames in clip order (imports nothing of this project)."""
    import mediapipe as mp
    import numpy as np

    crc, rgb = decode_clip(clip, frames)
    (h, w), f = rgb[0].shape[:2], len(rgb)
    arrays, seconds = record_runs(rgb, PEOPLE_RUNS, w, h, eighths=MASK_EIGHTHS)
    np.savez_compressed(out, mediapipe_version=np.array(mp.__version__),
                        size=np.array((w, h), np.int32), frame_crc32=crc, **arrays)  # fmt: skip
    per_frame = ", ".join(f"{k} {1000 * t / max(f, 1):.1f}" for k, t in seconds.items())
    print(f"{f} frames -> {out}; ms per frame: {per_frame}")


def frames_worker(rgb_file: str, out: str, keys: str, models: str) -> None:
    """Runs inside the MediaPipe venv: RUNS[key] for each of `keys` (comma-separated) over
    the frames of `rgb_file` (an .npz with `rgb`, frame_crc32 and whatever else the caller
    keeps with the run: written to `out` with the recordings); imports nothing of this
    project. MediaPipe 0.10.14 downloads pose_landmark_lite / _heavy (model_complexity 0 / 2)
    into its own package the first time a Pose or Holistic asks for one
    (solutions/download_utils.py), and skips that when the file is there: they are copied
    from `models` (the project's, from the npm registry's @mediapipe/pose, whose
    pose_landmark_full is the wheel's byte for byte), as no download may be possible."""
    import shutil

    import mediapipe as mp
    import numpy as np

    keys = keys.split(",")
    pose_dir = Path(mp.__file__).parent / "modules" / "pose_landmark"
    for key in keys:
        family, option = RUNS[key]
        name = {0: "pose_landmark_lite.tflite", 2: "pose_landmark_heavy.tflite"}.get(option)
        if family in ("pose", "holistic") and name and not (pose_dir / name).is_file():
            shutil.copyfile(Path(models) / name, pose_dir / name)
    with np.load(rgb_file) as given:
        kept = {k: given[k] for k in given.files if k != "rgb"}
        frames = given["rgb"]
    h, w = frames.shape[1:3]
    arrays, seconds = record_runs(frames, keys, w, h)
    np.savez_compressed(out, mediapipe_version=np.array(mp.__version__),
                        size=np.array((w, h), np.int32), **kept, **arrays)  # fmt: skip
    per_frame = ", ".join(f"{k} {1000 * t / len(frames):.1f}" for k, t in seconds.items())
    print(f"{len(frames)} frames -> {out}; ms per frame: {per_frame}")


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
    import mediapipe as mp
    import numpy as np

    crc, rgb = decode_clip(clip, frames)
    (h, w), f = rgb[0].shape[:2], len(rgb)
    arrays, _ = record_runs(rgb, ("hor",), w, h)
    np.savez_compressed(out, mediapipe_version=np.array(mp.__version__),
                        size=np.array((w, h), np.int32), frame_crc32=crc, **arrays)  # fmt: skip
    print(f"{f} frames, a face on {arrays['hor_face_present'].sum()} -> {out}")


HAND_STAGES = ("roi_from_pose", "roi_from_recrop", "tracking_roi")


def hand_rois_worker(rgb_file: str, out: str) -> None:
    """Runs inside the MediaPipe venv: Holistic as people_worker runs it (model_complexity
    1), its graph (holistic_landmark_cpu.binarypb) given its hand subgraph's debug outputs:
    per frame and hand, the ROI from the pose, from the re-crop and the tracking ROI the
    landmark model saw (hand_landmarks_left_and_right_cpu.pbtxt); on the frames of
    `rgb_file` (hh_*), then on them perturbed by its perturb_positions and perturb_steps
    (px_hh_*, a new graph). Also its pose and hands, which are people_clip.npz's ho_* and
    people_perturbed.npz's. Imports nothing of this project but this module's `perturb`."""
    import mediapipe as mp
    import numpy as np
    from mediapipe.framework import calculator_pb2
    from mediapipe.python.solution_base import SolutionBase

    graph = Path(mp.__file__).parent / "modules" / "holistic_landmark"
    config = calculator_pb2.CalculatorGraphConfig()
    config.ParseFromString((graph / "holistic_landmark_cpu.binarypb").read_bytes())
    streams = []
    for node in config.node:
        if node.calculator == "HandLandmarksLeftAndRightCpu":
            for side in ("left", "right"):
                for stage in HAND_STAGES:
                    name = f"{side}_hand_{stage}"
                    node.output_stream.append(f"{name.upper()}:{name}")
                    config.output_stream.append(name)
                    streams.append(name)
    with np.load(rgb_file) as given:
        kept = {k: given[k] for k in given.files if k != "rgb"}
        frames = given["rgb"]
    (h, w), none = frames.shape[1:3], [np.nan] * 5
    arrays = {}
    for prefix in ("hh", "px_hh"):
        holistic = SolutionBase(graph_config=config, side_inputs={
            "model_complexity": 1, "smooth_landmarks": True, "enable_segmentation": True,
            "smooth_segmentation": True, "refine_face_landmarks": False,
            "use_prev_landmarks": True,
        }, outputs=["pose_landmarks", "left_hand_landmarks", "right_hand_landmarks",
                    *streams])  # fmt: skip
        rec: dict[str, list] = {}
        for i, frame in enumerate(frames):
            if prefix == "px_hh":
                frame = perturb(frame, kept["perturb_positions"][i], kept["perturb_steps"][i])
            r = holistic.process(frame)
            for part in ("pose", "left_hand", "right_hand"):
                lms = getattr(r, f"{part}_landmarks")
                rec.setdefault(f"{part}_present", []).append(lms is not None)
                if lms is not None:
                    rec.setdefault(f"{part}_landmarks", []).append(
                        [[p.x, p.y, p.z] for p in lms.landmark])  # fmt: skip
            for name in streams:
                roi = getattr(r, name)
                rec.setdefault(name, []).append(none if roi is None else [
                    roi.x_center, roi.y_center, roi.width, roi.height, roi.rotation])  # fmt: skip
        holistic.close()
        arrays |= {f"{prefix}_{k}": np.array(v, bool if k.endswith("_present") else np.float32)
                   for k, v in rec.items()}  # fmt: skip
    np.savez_compressed(out, mediapipe_version=np.array(mp.__version__),
                        size=np.array((w, h), np.int32), **kept, **arrays)  # fmt: skip
    print(f"{len(frames)} frames, hand ROIs on the clip and perturbed -> {out}")


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
              "pose_variants": (PEOPLE_CLIP, POSE_VARIANTS_OUT),
              "options": (PEOPLE_CLIP, OPTIONS_OUT), "perturbed": (PEOPLE_CLIP, PERTURBED_OUT),
              "perturbed_faces": (PEOPLE_CLIP, PERTURBED_FACES_OUT),
              "holistic_hand_rois": (PEOPLE_CLIP, HAND_ROIS_OUT)}  # fmt: skip
# the references made from the clip's frames decoded here (frames_worker): name -> RUNS keys
FRAME_RUNS = {"options": OPTION_RUNS, "perturbed": PERTURBED_RUNS,
              "perturbed_faces": PERTURBED_FACE_RUNS}  # fmt: skip


def perturbation(count: int, h: int, w: int, seed: int = PERTURB_SEED):
    """The perturbation's pixels and steps for `count` frames of h x w: positions [count, 2,
    2] (row, column; two distinct pixels a frame, uniform, from numpy's default_rng(seed)),
    then steps [count, 2] (+1 or -1 each, from the same generator)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    flat = np.stack([rng.choice(h * w, 2, replace=False) for _ in range(count)])
    steps = rng.choice(np.array([-1, 1], np.int8), (count, 2))
    return np.stack(np.divmod(flat, w), axis=-1).astype(np.int32), steps


def perturb(rgb, positions, steps):
    """A copy of the frame with its two pixels moved one 8-bit level: each channel of the
    pixel at positions[k] by steps[k], or by -steps[k] where that would leave 0..255 (so
    every channel of both pixels changes by exactly one level)."""
    import numpy as np

    out = rgb.copy()
    for (y, x), step in zip(positions, steps, strict=True):
        v = out[y, x].astype(np.int16)
        moved = v + step
        out[y, x] = np.where((moved < 0) | (moved > 255), v - step, moved)
    return out


def clip_rgb(clip: str, frames: int):
    """The clip's first `frames` frames (RGB, [F, H, W, 3]) decoded here, checked against
    people_clip.npz's CRCs, and those CRCs."""
    import numpy as np

    from benchmarks.fidelity.compare import clip_frames, load_reference

    crc = load_reference(PEOPLE_OUT)["frame_crc32"][:frames]
    return np.stack(clip_frames(clip, crc, len(crc))), crc


def run_pose_variants(python: str, clip: str, out: str, frames: int) -> int:
    """pose_variants_worker in the MediaPipe venv on the clip's frames, decoded here and
    checked against people_clip.npz's CRCs; the worker's exit status."""
    import tempfile

    import numpy as np

    from engine.catalog.people import shot_starts

    rgb, crc = clip_rgb(clip, frames)
    cuts = ",".join(str(s) for s in shot_starts()[:-1])
    with tempfile.TemporaryDirectory() as tmp:
        given = Path(tmp) / "frames.npz"
        np.savez(given, rgb=rgb, frame_crc32=crc)
        cmd = [python, __file__, "--worker", "pose_variants", "--clip", str(given), "--out",
               out, "--cuts", cuts]  # fmt: skip
        return subprocess.run(cmd).returncode


def run_frames(python: str, name: str, clip: str, out: str, frames: int) -> int:
    """frames_worker in the MediaPipe venv: FRAME_RUNS[name] on the clip's frames decoded
    here (checked against people_clip.npz's CRCs), perturbed for the perturbed files (the
    perturbation's seed, positions, steps and the perturbed frames' CRCs go with the run);
    or hand_rois_worker (holistic_hand_rois: the frames and the perturbation, which it
    applies itself); the worker's exit status."""
    import tempfile
    import zlib

    import numpy as np

    from engine.catalog.paths import models_dir

    rgb, crc = clip_rgb(clip, frames)
    kept = {"frame_crc32": crc}
    if name.startswith("perturbed") or name == "holistic_hand_rois":
        positions, steps = perturbation(*rgb.shape[:3])
        kept |= {"perturb_seed": np.array(PERTURB_SEED, np.int64),
                 "perturb_positions": positions, "perturb_steps": steps}  # fmt: skip
    if name.startswith("perturbed"):
        rgb = np.stack([perturb(f, p, s) for f, p, s in zip(rgb, positions, steps, strict=True)])
        bgr_crc = [zlib.crc32(np.ascontiguousarray(f[:, :, ::-1]).tobytes()) for f in rgb]
        kept["perturbed_crc32"] = np.array(bgr_crc, np.uint32)
    with tempfile.TemporaryDirectory() as tmp:
        given = Path(tmp) / "frames.npz"
        np.savez(given, rgb=rgb, **kept)
        worker = "frames" if name in FRAME_RUNS else name
        cmd = [python, __file__, "--worker", worker, "--clip", str(given), "--out", out]
        if worker == "frames":
            cmd += ["--keys", ",".join(FRAME_RUNS[name]), "--models", str(models_dir())]
        return subprocess.run(cmd).returncode


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", choices=sorted(REFERENCES), help="make one (default: all)")
    ap.add_argument("--frames", type=int, default=300)
    ap.add_argument("--clip", default=None, help="with --only: another clip than the assets'")
    ap.add_argument("--out", default=None, help="with --only: another file than the default")
    ap.add_argument("--mp-python", default=None, help="python of a venv with mediapipe==0.10.14")
    ap.add_argument("--worker", choices=[*sorted(REFERENCES), "frames"], help=argparse.SUPPRESS)
    ap.add_argument("--cuts", help=argparse.SUPPRESS)
    ap.add_argument("--keys", help=argparse.SUPPRESS)
    ap.add_argument("--models", help=argparse.SUPPRESS)
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
    if args.worker == "holistic_hand_rois":
        hand_rois_worker(args.clip, args.out)
        return 0
    if args.worker == "frames":
        frames_worker(args.clip, args.out, args.keys, args.models)
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
        if name in FRAME_RUNS or name == "holistic_hand_rois":
            if run_frames(python, name, clip, out, args.frames):
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
