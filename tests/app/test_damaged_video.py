"""Damaged copies of the sample clip (seeded: benchmarks/app/damaged_video.py): the PyAV reader
reads past the damage, lists the skipped frames, keeps FFmpeg quiet; ar-demo exits 3."""

from __future__ import annotations

import json
import logging

import pytest

from app.errors import AppError
from app.sources import open_source
from benchmarks.app.damaged_video import make_damaged, read_opencv
from tests.helpers.files import model_file
from tests.helpers.media import sample_clip


@pytest.fixture(scope="module")
def damaged(tmp_path_factory):
    return make_damaged(sample_clip(), tmp_path_factory.mktemp("damaged"), seed=0)


def _read_all(path, **kw):
    src = open_source(str(path), **kw)
    frames = []
    while (f := src.read()) is not None:
        frames.append(f.index)
    src.close()
    return src, frames


def test_zeroed_middle_is_read_past_and_listed(damaged, capfd):
    # the middle tenth of the media data is zero: OpenCV's read loop stops at the gap
    opencv = read_opencv(str(damaged["zeroed"]), persist=False)["frames"]
    capfd.readouterr()  # OpenCV's FFmpeg prints its own messages
    src, frames = _read_all(damaged["zeroed"])
    assert opencv < len(frames)
    assert len(frames) == src.frames_read == 300 - src.frames_skipped
    assert src.frames_skipped > 0 and len(src.skipped) == 1
    gap = src.skipped[0]
    assert frames[gap.first - 1] == gap.first - 1 and frames[gap.first] == gap.last + 1
    assert gap.reason  # FFmpeg's reason, e.g. "Invalid data found when processing input"
    assert capfd.readouterr().err == ""  # the decoder's own log stays off


def test_byte_flips_lose_at_most_a_few_frames(damaged, capfd):
    opencv = read_opencv(str(damaged["flips"]), persist=False)["frames"]
    capfd.readouterr()
    src, frames = _read_all(damaged["flips"])
    assert opencv < 200 <= len(frames)  # measured: OpenCV 146, PyAV 299 of 300
    assert frames == sorted(set(frames)) and src.frames_read + src.frames_skipped == 300
    assert capfd.readouterr().err == ""


def test_truncated_faststart_clip_reads_to_the_cut(damaged):
    src, frames = _read_all(damaged["truncated-faststart"])
    assert frames == list(range(len(frames))) and 0 < len(frames) < 300
    (tail,) = src.skipped
    assert (tail.first, tail.last) == (len(frames), 299)


def test_truncated_mp4_without_its_index_is_one_line_error(damaged):
    with pytest.raises(AppError, match="cannot open the video") as err:
        open_source(str(damaged["truncated"]))
    assert "\n" not in str(err.value)


def test_verbose_shows_the_decoder_log(damaged, caplog):
    with caplog.at_level(logging.WARNING):
        _read_all(damaged["zeroed"], verbose=True)
    assert any(r.name.startswith("libav") for r in caplog.records)


def test_clean_clip_matches_opencv_bit_for_bit():
    import cv2
    import numpy as np

    src = open_source(str(sample_clip()), 5)
    cap = cv2.VideoCapture(str(sample_clip()))
    for _ in range(5):
        ok, want = cap.read()
        assert ok and np.array_equal(src.read().bgr, want)
    assert src.read() is None and src.skipped == []


@pytest.mark.gpu
def test_ar_demo_exits_3_and_lists_the_skipped_frames(damaged, tmp_path, capsys):
    from app.cli import main
    from tests.helpers.gpu import gpu_context
    from tests.helpers.media import read_video

    gpu_context()
    stats, out = tmp_path / "stats.json", tmp_path / "o.mp4"
    code = main(["--model", str(model_file("face_detection_short_range")), "--input",
                 str(damaged["zeroed"]), "--headless", "--output", str(out),
                 "--stats", str(stats), "--no-progress", "--frames", "140"])  # fmt: skip
    s = json.loads(stats.read_text())
    assert code == 3 and s["exit_code"] == 3
    assert s["frames_read"] == s["frames_written"] == 140 and s["frames_skipped"] > 0
    (gap,) = s["skipped_frames"]
    assert gap["count"] == s["frames_skipped"] and gap["first"] < 140
    # the output plays, every written frame in it; stderr warns in one line, the summary
    # lists the frames
    assert len(read_video(out)) == 140
    printed = capsys.readouterr()
    err = [line for line in printed.err.splitlines() if line.strip()]
    assert len(err) == 1 and err[0].startswith("ar-demo: warning:"), err
    assert f"{gap['count']} damaged frames of {damaged['zeroed']}" in err[0], err
    last = gap["first"] + gap["count"] - 1
    assert f"skipped {gap['count']} damaged frames of the input" in printed.out
    assert f"{gap['first']}-{last}" in printed.out


def test_variable_frame_rate_is_not_damage(tmp_path):
    """Gaps in the timestamps without a decode error are a variable frame rate, not skips."""
    from fractions import Fraction

    import av
    import numpy as np

    path = tmp_path / "vfr.mp4"
    with av.open(str(path), "w") as out:
        stream = out.add_stream("mpeg4", rate=30)
        stream.width, stream.height, stream.pix_fmt = 64, 48, "yuv420p"
        stream.codec_context.time_base = Fraction(1, 30)
        for i in range(20):
            frame = av.VideoFrame.from_ndarray(np.full((48, 64, 3), i * 10, np.uint8), "rgb24")
            frame.pts, frame.time_base = i + (20 if i >= 10 else 0), Fraction(1, 30)  # a pause
            out.mux(stream.encode(frame))
        out.mux(stream.encode(None))
    src, frames = _read_all(path)
    assert len(frames) == 20 and frames == sorted(set(frames))
    assert frames[-1] > 19 and src.skipped == []  # the indices jump at the pause: no skips
