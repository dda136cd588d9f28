"""engine/catalog/samples.py's clip kept in the repository: the frames the sample references
saw (sample_clip.npz, image_to_tensor.npz), copied by make() in a checkout instead of a
render whose frames follow the CPU."""

from __future__ import annotations

import hashlib
import shutil
import zlib

import cv2
import numpy as np
import pytest

from benchmarks.fidelity.compare import REFERENCE, load_reference
from engine.catalog import paths, samples
from tests.helpers.files import ASSETS_DIR

KEPT = paths.kept_clip(samples.CLIP)


def test_sample_clip_is_the_references_clip():
    """A stored mp4v file: the same frames wherever the decoder is the same."""
    assert KEPT is not None and KEPT.parent.name == "mediapipe"
    assert hashlib.sha256(KEPT.read_bytes()).hexdigest() == samples.CLIP_SHA256
    cap, crcs = cv2.VideoCapture(str(KEPT)), []
    while (frame := cap.read())[0]:
        crcs.append(zlib.crc32(np.ascontiguousarray(frame[1]).tobytes()))
    cap.release()
    assert crcs == load_reference(REFERENCE)["frame_crc32"].tolist()


def test_make_in_a_checkout_copies_the_kept_clip(tmp_path, capsys):
    """A whole clip there that is not the kept one (a render made before) is replaced; the
    kept one is left alone on the next run."""
    png = ASSETS_DIR / "astronaut.png"
    if not png.is_file():
        pytest.skip(f"{png} missing: run `make assets`")
    shutil.copy(png, tmp_path / png.name)  # no wheel needed for the still
    clip = tmp_path / samples.CLIP
    clip.write_bytes(KEPT.read_bytes() + b"\0\0\0\x08free")  # an empty mp4 box more
    assert samples.count_frames(clip) == (samples.FRAMES, samples.SIZE)
    samples.make(out=tmp_path)
    assert clip.read_bytes() == KEPT.read_bytes()
    assert "copied" in capsys.readouterr().out
    samples.make(out=tmp_path)
    assert "nothing to do" in capsys.readouterr().out
    assert not list(tmp_path.glob(".*"))  # no temporary file left


def test_make_renders_where_no_clip_is_kept(tmp_path, monkeypatch, capsys):
    """An installed wheel has no checkout, so no kept clip: make() renders, and says that
    the render's frames may not be the references'."""
    png = ASSETS_DIR / "astronaut.png"
    if not png.is_file():
        pytest.skip(f"{png} missing: run `make assets`")
    shutil.copy(png, tmp_path / png.name)
    monkeypatch.setattr(paths, "source_checkout", lambda: None)
    assert paths.kept_clip(samples.CLIP) is None
    rendered = []

    def write_clip(still, path, frames):  # the render's length, not its 300 frames
        rendered.append(frames)
        path.write_bytes(b"a render")

    monkeypatch.setattr(samples, "write_clip", write_clip)
    samples.make(out=tmp_path)
    assert rendered == [samples.FRAMES]
    assert "this machine's render" in capsys.readouterr().out
