"""Damaged copies of a video and how many frames each reader gets out of them.

    python -m benchmarks.app.damaged_video [--input assets/sample.mp4] [--out out/damaged]
                                         [--seed 0] [--json out/damaged.json]

Damage (seeded, from the clean clip; top-level mp4 boxes found by parsing, so the index
box `moov` stays intact unless the damage is a truncation):
- flips: `FLIPS` random bytes of the media data (`mdat`) XOR-ed with a random non-zero byte;
- zeroed: the middle tenth of the media data set to zero;
- truncated: the file cut at 60% (the clip's `moov` is at the end: nothing can index it);
- truncated-faststart: the clip remuxed with `moov` first (PyAV), then cut at 60%.

Readers, each in a subprocess (its stderr lines counted: the decoder's own log):
- opencv: cv2.VideoCapture's read loop, stopping at the first failed read (ar-demo's reader before PyAV);
- opencv-persist: the same, but going on after a failed read until PERSIST failures in a row;
- pyav: app.sources' PyAV reader (demux packet by packet, a packet that fails to decode
  is skipped and listed, the decoder's log off).
Prints a markdown table of frames out of the frames the container declares, under the
stamp line (benchmarks/common.py; no adapter: nothing runs on the GPU).
"""

from __future__ import annotations

import argparse
import json
import struct
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from benchmarks.common import Bench, table

FLIPS = 800  # random byte flips in 1.6 MB of media data (one per 2 KB): OpenCV stops near 146/300
ZERO_FRACTION = 0.10  # of the media data, centred
TRUNCATE_AT = 0.60  # of the file
DAMAGES = ("flips", "zeroed", "truncated", "truncated-faststart")
PERSIST = 100  # opencv-persist gives up after this many failed reads in a row (a gap)
READERS = ("opencv", "opencv-persist", "pyav")


def top_level_boxes(data: bytes) -> dict[str, tuple[int, int]]:
    """mp4 top-level boxes: type -> (payload start, end)."""
    boxes, i = {}, 0
    while i + 8 <= len(data):
        size, kind = struct.unpack(">I4s", data[i : i + 8])
        head = 8
        if size == 1:  # 64-bit size
            size, head = struct.unpack(">Q", data[i + 8 : i + 16])[0], 16
        elif size == 0:  # to the end of the file
            size = len(data) - i
        if size < head:
            break
        boxes[kind.decode("latin-1")] = (i + head, min(i + size, len(data)))
        i += size
    return boxes


def media_range(data: bytes) -> tuple[int, int]:
    """Where the media data is (the `mdat` payload; the whole file when there is none)."""
    return top_level_boxes(data).get("mdat", (0, len(data)))


def flip_bytes(data: bytes, seed: int, count: int = FLIPS) -> bytes:
    rng = np.random.default_rng(seed)
    lo, hi = media_range(data)
    out = bytearray(data)
    for at in rng.choice(np.arange(lo, hi), size=count, replace=False):
        out[int(at)] ^= int(rng.integers(1, 256))
    return bytes(out)


def zero_middle(data: bytes, fraction: float = ZERO_FRACTION) -> bytes:
    lo, hi = media_range(data)
    mid, half = (lo + hi) // 2, int((hi - lo) * fraction / 2)
    out = bytearray(data)
    out[mid - half : mid + half] = bytes(2 * half)
    return bytes(out)


def truncate(data: bytes, keep: float = TRUNCATE_AT) -> bytes:
    return data[: int(len(data) * keep)]


def faststart(src: Path, dst: Path) -> None:
    """Remux `src` with the index (moov) before the media data (PyAV, no re-encoding)."""
    import av

    with av.open(str(src)) as inp, av.open(str(dst), "w", options={"movflags": "faststart"}) as out:
        vin = inp.streams.video[0]
        vout = out.add_stream_from_template(vin)
        for packet in inp.demux(vin):
            if packet.dts is None:
                continue
            packet.stream = vout
            out.mux(packet)


def make_damaged(src: Path, out_dir: Path, seed: int = 0) -> dict[str, Path]:
    """Every damaged copy of `src` in `out_dir`: damage name -> path."""
    out_dir.mkdir(parents=True, exist_ok=True)
    data = src.read_bytes()
    paths = {}
    for name, damaged in (("flips", flip_bytes(data, seed)), ("zeroed", zero_middle(data)),
                          ("truncated", truncate(data))):  # fmt: skip
        paths[name] = out_dir / f"{src.stem}-{name}{src.suffix}"
        paths[name].write_bytes(damaged)
    fast = out_dir / f"{src.stem}-faststart{src.suffix}"
    faststart(src, fast)
    paths["truncated-faststart"] = out_dir / f"{src.stem}-truncated-faststart{src.suffix}"
    paths["truncated-faststart"].write_bytes(truncate(fast.read_bytes()))
    fast.unlink()
    return paths


# --- readers (run in a child process: python -m benchmarks.app.damaged_video --read R PATH) ---
def read_opencv(path: str, persist: bool) -> dict:
    import cv2

    t0 = time.perf_counter()
    cap = cv2.VideoCapture(path)
    frames = misses = 0
    while cap.isOpened():
        ok, _ = cap.read()
        if ok:
            frames, misses = frames + 1, 0
        elif not persist or (misses := misses + 1) >= PERSIST:
            break
    cap.release()
    return {"frames": frames, "s": time.perf_counter() - t0}


def read_pyav(path: str) -> dict:
    import av  # noqa: F401  (imported before the clock starts, as cv2 is for OpenCV)

    from app.errors import AppError
    from app.sources import open_source

    t0 = time.perf_counter()
    try:
        src = open_source(path, reader="pyav")
    except AppError:
        return {"frames": 0, "s": time.perf_counter() - t0, "skipped": None}
    frames = 0
    while src.read() is not None:
        frames += 1
    src.close()
    return {"frames": frames, "s": time.perf_counter() - t0,
            "skipped": [s.as_dict() for s in src.skipped],
            "concealed": sum(s.count for s in src.concealed)}  # fmt: skip


def declared_frames(path: Path) -> int:
    import cv2

    cap = cv2.VideoCapture(str(path))
    n = int(cap.get(cv2.CAP_PROP_FRAME_COUNT))
    cap.release()
    return n


def measure(path: Path, reader: str) -> dict:
    """Frames `reader` gets out of `path`, and the lines its decoder printed on stderr."""
    proc = subprocess.run([sys.executable, "-m", "benchmarks.app.damaged_video", "--read", reader,
                           str(path)], capture_output=True, text=True, timeout=300)  # fmt: skip
    out = json.loads(proc.stdout.strip().splitlines()[-1]) if proc.returncode == 0 else {}
    return {"frames": out.get("frames"), **out, "stderr_lines": len(proc.stderr.splitlines())}


HEADER = ["clip", "frames in", *(f"{r} out" for r in READERS), "PyAV: skipped frames listed",
          "PyAV: concealed", f"stderr lines ({' / '.join(READERS)})",
          f"ms per frame ({' / '.join(READERS)})"]  # fmt: skip


def markdown(rows: list[dict]) -> str:
    cells = []
    for r in rows:
        got = ["error" if r[k]["frames"] is None else str(r[k]["frames"]) for k in READERS]
        err = " / ".join(str(r[k]["stderr_lines"]) for k in READERS)
        ms = " / ".join(f"{1e3 * r[k]['s'] / r[k]['frames']:.2f}" if r[k].get("frames")
                        else "-" for k in READERS)  # fmt: skip
        py = r["pyav"]
        listed = ("file not opened" if py.get("skipped") is None else
                  ", ".join(f"{s['first']}-{s['last']}" if s["count"] > 1 else str(s["first"])
                            for s in py["skipped"]) or "none")  # fmt: skip
        cells.append([r["clip"], r["frames_in"], *got, listed, py.get("concealed", "-"), err, ms])
    return "\n".join(table(HEADER, cells, "lr" + "r" * len(READERS) + "lrll"))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.app.damaged_video",
                                description=__doc__.split("\n")[0])  # fmt: skip
    p.add_argument("--input", help="the clean clip (default: the sample clip)")
    p.add_argument("--out", default="out/damaged", help="folder for the damaged copies")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", metavar="OUT.json")
    p.add_argument("--read", nargs=2, metavar=("READER", "PATH"), help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.read:
        reader, path = args.read
        got = read_pyav(path) if reader == "pyav" else read_opencv(path, reader == "opencv-persist")
        print(json.dumps(got))
        return 0
    if args.input is None:
        from engine.catalog.paths import assets_dir

        args.input = str(assets_dir() / "sample.mp4")
    src = Path(args.input)
    bench = Bench(__spec__.name, argv)
    frames_in = declared_frames(src)
    clips = {"clean": src, **make_damaged(src, Path(args.out), args.seed)}
    rows = []
    for name, path in clips.items():
        row = {"clip": name, "path": str(path), "frames_in": frames_in}
        row.update({r: measure(path, r) for r in READERS})
        rows.append(row)
    bench.report(markdown(rows), {"seed": args.seed, "rows": rows}, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
