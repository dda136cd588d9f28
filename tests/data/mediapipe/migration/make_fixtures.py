"""MediaPipe 0.10.14's own runs of the migration scripts, the drop-in's oracle and its floor.

- input: the scripts of this folder (MediaPipe's documented Python examples and four
  common patterns, each written for `import mediapipe as mp`), MediaPipe 0.10.14 in a
  side venv (--mp-python; made as make_dropin.py makes it), and
  tests/data/mediapipe/people.mp4, decoded here once and checked frame by frame against
  people_clip.npz's CRCs: that decoded sequence, written as PNG files, is the lossless
  copy every run reads (OpenCV reads `DIR/%03d.png` as a video)
- the floor: each script also runs on a perturbed copy, the same frames with two pixels
  of each changed by one 8-bit step (`perturb`: positions and channels drawn by
  numpy's default_rng([PERTURB_SEED, frame]), up one step, or down from 255). The share
  of printed lines equal between the two runs is how far MediaPipe agrees with itself
  under a change no eye sees; the drop-in passes where it agrees with MediaPipe's clean
  run on at least that share (tests/vision/mediapipe/test_migration.py)
- the images: where a frame's printed line and what its image was made from agree
  (record_drawing.py records the pixels drawing_utils draws each landmark and detection
  at, and the mask's pixels above the scripts' thresholds), two runs' images are
  compared pixel for pixel; the tolerance, per script, is the most pixels by which the
  perturbed run's images differ from the clean run's there (the two perturbed pixels
  themselves not counted): 0 for every script as made
- output, beside this file:
  - migration.json.gz: per script its arguments, both runs' printed lines, the floor,
    each image's frame, flip, what it was made from (record_drawing.py) and
    perturbed-run difference, the tolerance;
  - migration_images.npz: the clean run's images, each stored as what differs from its
    clip frame (`residual`: a packed mask of the changed pixels and their values; the
    frame comes from people.mp4 again), so that annotations cost kilobytes
- models: Pose and Holistic with model_complexity=2 (the pose and holistic examples'
  static part) need pose_landmark_heavy, which MediaPipe downloads at run time; this
  copies models/pose_landmark_lite.tflite and _heavy.tflite (engine-fetch models) into
  the side venv's mediapipe/modules/pose_landmark/ where they are missing
- usage: python -m tests.data.mediapipe.migration.make_fixtures [--mp-python PATH]
         [--scripts hands,pose]   (the others keep their stored runs)
"""

from __future__ import annotations

import argparse
import gzip
import json
import shutil
import subprocess
import sys
import tempfile
import zlib
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
DATA = HERE.parent
PEOPLE_CLIP = DATA / "people.mp4"
FIXTURE = HERE / "migration.json.gz"
IMAGES = HERE / "migration_images.npz"
RECORDER = HERE / "record_drawing.py"
IMPORT_LINE = "import mediapipe as mp"
DROPIN_LINE = "from engine.vision import mediapipe as mp"
# the documented examples (a "static images" part on STILLS, then the video) and the
# patterns (the video only)
EXAMPLES = ("face_detection", "face_mesh", "hands", "pose", "holistic", "selfie_segmentation")
PATTERNS = ("finger_counter", "joint_angle", "eye_aspect_ratio", "background_replacement")
SCRIPTS = EXAMPLES + PATTERNS
# the stills: the card table, the two men, the street; each has a person, as the holistic
# example's unguarded segmentation_mask needs
STILLS = (100, 210, 250)
PERTURB_SEED = 5309
SEQUENCE = "%03d.png"


# --- frames --------------------------------------------------------------------------------
def clip_frames(count: int | None = None) -> list[np.ndarray]:
    """people.mp4's first `count` frames (all: None), BGR, each checked against
    people_clip.npz's CRC so that every run sees the pixels the references were made from."""
    import cv2

    with np.load(DATA / "people_clip.npz") as ref:
        crcs = ref["frame_crc32"]
    cap = cv2.VideoCapture(str(PEOPLE_CLIP))
    frames = []
    while count is None or len(frames) < count:
        ok, bgr = cap.read()
        if not ok:
            break
        if zlib.crc32(np.ascontiguousarray(bgr).tobytes()) != int(crcs[len(frames)]):
            raise RuntimeError(f"{PEOPLE_CLIP}: frame {len(frames)} is not the one "
                               "people_clip.npz was made from (another decoder?)")  # fmt: skip
        frames.append(bgr)
    cap.release()
    return frames


def perturbed_pixels(shape: tuple[int, ...], index: int) -> list[tuple[int, int, int]]:
    """The two (row, column, channel) that `perturb` changes in frame `index`."""
    h, w, c = shape
    rng = np.random.default_rng([PERTURB_SEED, index])
    flat = rng.choice(h * w, size=2, replace=False)
    channels = rng.integers(0, c, size=2)
    return [(int(p // w), int(p % w), int(ch)) for p, ch in zip(flat, channels, strict=True)]


def perturbed_positions(shape: tuple[int, ...], index: int) -> list[tuple[int, int]]:
    """The (row, column) of frame `index`'s perturbed pixels, and their mirror images (the
    examples mirror their frames)."""
    w = shape[1]
    return [p for y, x, _ in perturbed_pixels(shape, index) for p in ((y, x), (y, w - 1 - x))]


def perturb(bgr: np.ndarray, index: int) -> np.ndarray:
    """Frame `index` with two pixels changed by one 8-bit step (perturbed_pixels)."""
    out = bgr.copy()
    for y, x, ch in perturbed_pixels(bgr.shape, index):
        out[y, x, ch] = out[y, x, ch] + 1 if out[y, x, ch] < 255 else 254
    return out


def write_sequence(frames: list[np.ndarray], folder: Path) -> str:
    """`frames` as lossless PNG files in `folder`; the pattern OpenCV reads as a video."""
    import cv2

    folder.mkdir(parents=True, exist_ok=True)
    for i, bgr in enumerate(frames):
        cv2.imwrite(str(folder / (SEQUENCE % i)), bgr, [cv2.IMWRITE_PNG_COMPRESSION, 1])
    return str(folder / SEQUENCE)


def script_args(name: str, folder: Path, out_dir: Path, stills: bool = True) -> list[str]:
    """A script's command-line arguments: the sequence in `folder`, `out_dir`, and for the
    examples the stills (files of the same sequence)."""
    args = [str(folder / SEQUENCE), str(out_dir)]
    if stills and name in EXAMPLES:
        args += [str(folder / (SEQUENCE % i)) for i in STILLS]
    return args


def dropin_source(name: str) -> str:
    """The script with its import line replaced by the drop-in's, nothing else changed."""
    text = (HERE / f"{name}.py").read_text()
    lines = text.split("\n")
    if lines.count(IMPORT_LINE) != 1:
        raise ValueError(f"{name}.py: `{IMPORT_LINE}` must be one line of its own, once")
    return "\n".join(DROPIN_LINE if line == IMPORT_LINE else line for line in lines)


def run_script(python: str, script: Path, args: list[str], cwd: Path) -> tuple[list[str], dict]:
    """(the lines `script` prints, what each image it wrote was made from: record_drawing.py);
    its stderr is shown only when it fails."""
    record = Path(args[1]) / "made_from.json"  # in OUT_DIR, written after the images
    cmd = [python, str(RECORDER), str(record), str(script), *args]
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"{script.name} exited {proc.returncode}:\n{proc.stderr[-4000:]}")
    made_from = json.loads(record.read_text())
    record.unlink()
    return proc.stdout.splitlines(), made_from


# --- lines and images ----------------------------------------------------------------------
def keyed(lines: list[str]) -> dict[str, str]:
    """Printed lines by their tag ("image 0", "frame 17"; other lines by position)."""
    out = {}
    for i, line in enumerate(lines):
        tag, sep, _ = line.partition(":")
        out[tag if sep and tag.split(" ")[0] in ("image", "frame") else f"line {i}"] = line
    return out


def agreement(ours: list[str], reference: list[str], tags=None) -> tuple[int, int]:
    """(lines string-equal, lines in all): matched by tag, a line either run lacks differs;
    `tags`: those lines only (default: every tag of either run)."""
    a, b = keyed(ours), keyed(reference)
    tags = set(a) | set(b) if tags is None else set(tags)
    return sum(a.get(t) == b.get(t) for t in tags), len(tags)


def image_tag(name: str) -> str:
    """The tag of an image's printed line: frame_030.png -> "frame 30", a still's file
    (annotated_image1.png, selfie_segmentation_output1.png) -> "image 1"."""
    stem = Path(name).stem
    digits = stem[len(stem.rstrip("0123456789")) :]
    return f"{'frame' if stem.startswith('frame_') else 'image'} {int(digits)}"


def image_frame(name: str) -> int:
    """The clip frame an image was made from."""
    kind, number = image_tag(name).split(" ")
    return int(number) if kind == "frame" else STILLS[int(number)]


def comparable(image_name: str, lines_a: list[str], lines_b: list[str], made_from_a: dict,
               made_from_b: dict) -> bool:  # fmt: skip
    """Whether two runs' images `image_name` must be equal: its line is the same in both,
    and so is what it was made from (record_drawing.py: every point drawn at the same
    pixels, the same pixels kept by the segmentation mask)."""
    tag = image_tag(image_name)
    return keyed(lines_a).get(tag) == keyed(lines_b).get(tag) and (
        made_from_a.get(image_name) == made_from_b.get(image_name)
    )


def residual(image: np.ndarray, frame: np.ndarray) -> tuple[bool, np.ndarray, np.ndarray]:
    """(flip, packed mask, values): what differs from the frame, or from it mirrored
    (the examples mirror their frames), whichever differs less."""
    import cv2

    best = None
    for flip in (False, True):
        base = cv2.flip(frame, 1) if flip else frame
        changed = (image != base).any(axis=2)
        if best is None or changed.sum() < best[1].sum():
            best = (flip, changed)
    flip, changed = best
    return flip, np.packbits(changed), image[changed]


def rebuild(flip: bool, packed: np.ndarray, values: np.ndarray, frame: np.ndarray) -> np.ndarray:
    """The image `residual` stored, from its clip frame."""
    import cv2

    image = (cv2.flip(frame, 1) if flip else frame).copy()
    changed = np.unpackbits(packed, count=image.shape[0] * image.shape[1]).astype(bool)
    image.reshape(-1, 3)[changed] = values
    return image


def differing_pixels(a: np.ndarray, b: np.ndarray, skip: list[tuple[int, int]] = ()) -> int:
    """Pixels where two images differ in any channel, `skip` (row, column) not counted."""
    changed = (a != b).any(axis=2)
    for y, x in skip:
        changed[y, x] = False
    return int(changed.sum())


def load_fixture() -> dict:
    return json.loads(gzip.decompress(FIXTURE.read_bytes()))


def load_images(script: str, record: dict, frames: list[np.ndarray]) -> dict[str, np.ndarray]:
    """MediaPipe's images of `script` (its fixture record), rebuilt on their clip frames."""
    with np.load(IMAGES) as stored:
        return {name: rebuild(r["flip"], stored[f"{script}/{name}/mask"],
                              stored[f"{script}/{name}/values"], frames[r["frame"]])
                for name, r in record["images"].items()}  # fmt: skip


# --- the maker -----------------------------------------------------------------------------
def ensure_pose_models(python: str) -> None:
    """Copy pose_landmark_lite and _heavy into the side venv's mediapipe where missing."""
    code = "import mediapipe, os; print(os.path.dirname(mediapipe.__file__))"
    root = subprocess.run([python, "-c", code], capture_output=True, text=True, check=True)
    target = Path(root.stdout.strip()) / "modules" / "pose_landmark"
    from engine.catalog.paths import models_dir

    for name in ("pose_landmark_lite.tflite", "pose_landmark_heavy.tflite"):
        source, dest = models_dir() / name, target / name
        if not source.exists():
            raise FileNotFoundError(f"{source}: run `engine-fetch models`")
        if dest.exists() and dest.read_bytes() != source.read_bytes():
            raise RuntimeError(f"{dest}: other bytes than {source}")
        if not dest.exists():
            shutil.copyfile(source, dest)
            print(f"copied {name} into {target}", file=sys.stderr)


def record_script(python: str, name: str, frames: list[np.ndarray], tmp: Path) -> tuple:
    """(record, arrays) of one script: MediaPipe's clean and perturbed runs compared."""
    import cv2

    runs = {}
    for copy in ("clean", "perturbed"):
        out = tmp / name / copy
        out.mkdir(parents=True)
        args = script_args(name, tmp / copy, out)
        lines, made_from = run_script(python, HERE / f"{name}.py", args, tmp)
        images = {p.name: cv2.imread(str(p)) for p in sorted(out.glob("*.png"))}
        runs[copy] = (lines, made_from, images)
    (lines, made_from, images), (p_lines, p_made_from, p_images) = runs["clean"], runs["perturbed"]
    agree, total = agreement(p_lines, lines)
    record = {"args": script_args(name, Path("DIR"), Path("OUT_DIR")),
              "lines": lines, "perturbed_lines": p_lines,
              "floor": {"agree": agree, "of": total, "fraction": agree / total},
              "images": {}}  # fmt: skip
    arrays, tolerance = {}, 0
    for image_name, image in images.items():
        index = image_frame(image_name)
        flip, packed, values = residual(image, frames[index])
        arrays[f"{name}/{image_name}/mask"], arrays[f"{name}/{image_name}/values"] = packed, values
        other = p_images.get(image_name)
        skip = perturbed_positions(image.shape, index)
        diff = None if other is None else differing_pixels(image, other, skip)
        same = comparable(image_name, p_lines, lines, p_made_from, made_from)
        if same and diff is not None:
            tolerance = max(tolerance, diff)
        record["images"][image_name] = {"frame": index, "flip": flip, "made_from": made_from[image_name],
                                        "perturbed_comparable": same, "perturbed_diff": diff}  # fmt: skip
    record["image_tolerance"] = tolerance
    return record, arrays


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mp-python", default=None, help="python of a venv with mediapipe==0.10.14")
    ap.add_argument("--scripts", default=",".join(SCRIPTS))
    args = ap.parse_args(argv)
    names = [n for n in args.scripts.split(",") if n]
    unknown = sorted(set(names) - set(SCRIPTS))
    if unknown:
        ap.error(f"unknown scripts {unknown}: from {', '.join(SCRIPTS)}")
    from benchmarks.app.mediapipe_compare import mediapipe_python

    python = mediapipe_python(args.mp_python)
    ensure_pose_models(python)
    frames = clip_frames()
    previous = load_fixture() if FIXTURE.exists() else {"scripts": {}}
    arrays = {}
    if IMAGES.exists():
        with np.load(IMAGES) as stored:
            arrays = {k: stored[k] for k in stored.files if k.split("/")[0] not in names}
    version = subprocess.run([python, "-c", "import mediapipe; print(mediapipe.__version__)"],
                             capture_output=True, text=True, check=True).stdout.strip()  # fmt: skip
    scripts = {k: v for k, v in previous["scripts"].items() if k not in names}
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        write_sequence(frames, tmp / "clean")
        write_sequence([perturb(f, i) for i, f in enumerate(frames)], tmp / "perturbed")
        for name in names:
            record, script_arrays = record_script(python, name, frames, tmp)
            scripts[name] = record
            arrays.update(script_arrays)
            f = record["floor"]
            print(f"{name}: MediaPipe agrees with itself on {f['agree']} of {f['of']} lines "
                  f"({f['fraction']:.3f}); {len(record['images'])} images, tolerance "
                  f"{record['image_tolerance']} px", file=sys.stderr)  # fmt: skip
    doc = {"mediapipe_version": version,
           "frame_crc32": [zlib.crc32(np.ascontiguousarray(f).tobytes()) for f in frames],
           "stills": list(STILLS),
           "perturbation": {"seed": PERTURB_SEED, "pixels_per_frame": 2, "step": 1},
           "scripts": {n: scripts[n] for n in SCRIPTS if n in scripts}}  # fmt: skip
    FIXTURE.write_bytes(gzip.compress(json.dumps(doc, indent=0).encode(), mtime=0))
    np.savez_compressed(IMAGES, **{k: arrays[k] for k in sorted(arrays)})
    print(f"{FIXTURE.name} ({FIXTURE.stat().st_size // 1024} KB), {IMAGES.name} "
          f"({IMAGES.stat().st_size // 1024} KB)")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
