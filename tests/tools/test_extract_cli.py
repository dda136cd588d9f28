"""engine-extract: Parquet rows equal the solution run directly on the same frames,
resumability, atomic writes, one line per bad input, the missing extras, and --ray (a local
Ray of two workers) giving the same bytes as the single-process run."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from engine.tools.extract.options import SOLUTIONS, solution_class, solution_fields
from engine.tools.extract.table import plain
from engine.tools.extract.video import Video
from engine.tools.extract_cli import main
from engine.vision.records import frame_record
from tests.helpers.media import people_clip, sample_clip

pq = pytest.importorskip("pyarrow.parquet")

FRAMES = 20  # per clip: enough for tracking to take over from the detector
ARGS = ["--max-frames", str(FRAMES), "--no-progress", "--backend", "xnnpack"]


def _extract(out, *videos, extra=()) -> int:
    return main(["face-mesh", *map(str, videos), "--out", str(out), *ARGS, *extra])


def _direct(name: str, video, frames: int, **options) -> list[dict]:
    """The rows `name` gives when run here, frame by frame, on the tool's decoded frames."""
    fields = solution_fields(name)
    with Video(video) as v, solution_class(name)(backend="xnnpack", **options) as sol:
        return [plain(frame_record(i, sol.process(rgb, ts)), fields)
                for i, (rgb, ts) in enumerate(v.read(frames))]  # fmt: skip


@pytest.fixture(scope="module")
def single(tmp_path_factory):
    """The single-process run over both clips: (out dir, its files' bytes)."""
    out = tmp_path_factory.mktemp("single")
    assert _extract(out, sample_clip(), people_clip()) == 0
    return out, {p.name: p.read_bytes() for p in sorted(out.iterdir())}


def test_rows_equal_process_on_the_same_frames(single):
    out, files = single
    assert sorted(files) == ["people.parquet", "sample.parquet"]
    for clip in (sample_clip(), people_clip()):
        table = pq.read_table(out / f"{clip.stem}.parquet")
        want = _direct("face-mesh", clip, FRAMES)
        assert table.num_rows == FRAMES and table.to_pylist() == want
        assert table.schema.field("image_size").type.list_size == 2
        meta = {k.decode(): v.decode() for k, v in table.schema.metadata.items()}
        assert meta["engine_extract.solution"] == "face-mesh"
        assert meta["engine_extract.backend"] == "xnnpack"
        assert '"max_num_faces": 1' in meta["engine_extract.options"]
    rows = pq.read_table(out / "sample.parquet").to_pylist()
    assert rows[0]["detector_ran"] and not rows[-1]["detector_ran"]  # tracking took over
    with Video(sample_clip()) as v:
        rgb, _ = next(v.read())
    from engine.vision import FaceMesh

    with FaceMesh(backend="xnnpack") as fm:
        px = fm.process(rgb).faces[0].landmarks_px  # the columns hold float32 exactly
    np.testing.assert_array_equal(np.array(rows[0]["meshes"][0]["landmarks_px"]),
                                  px.astype(np.float32))  # fmt: skip


@pytest.mark.parametrize("name", [n for n in SOLUTIONS if n != "face-mesh"])
def test_every_solution_writes_its_fields(tmp_path, name):
    clip = sample_clip()
    assert main([name, str(clip), "--out", str(tmp_path), "--max-frames", "3", "--no-progress",
                 "--backend", "xnnpack"]) == 0  # fmt: skip
    table = pq.read_table(tmp_path / "sample.parquet")
    assert table.to_pylist() == _direct(name, clip, 3)
    assert table.schema.names == list(solution_fields(name))


def test_second_run_skips_and_keeps_existing_files(tmp_path, capsys):
    keep = tmp_path / "sample.parquet"
    keep.write_bytes(b"an earlier result")
    assert _extract(tmp_path, sample_clip(), people_clip()) == 0
    assert keep.read_bytes() == b"an earlier result"
    written = (tmp_path / "people.parquet").stat()
    assert f"skipped {sample_clip()}: {keep} exists" in capsys.readouterr().err
    assert _extract(tmp_path, sample_clip(), people_clip()) == 0
    err = capsys.readouterr().err
    assert err.count("engine-extract: skipped ") == 2 and "0 done (0 frames), 2 skipped" in err
    assert (tmp_path / "people.parquet").stat().st_mtime_ns == written.st_mtime_ns


def _fail_at_frame(monkeypatch, n: int, exc: BaseException) -> None:
    cls = solution_class("face-mesh")
    process = cls.process
    calls = [0]

    def failing(self, *a, **k):
        calls[0] += 1
        if calls[0] > n:
            raise exc
        return process(self, *a, **k)

    monkeypatch.setattr(cls, "process", failing)


def test_a_failure_mid_file_leaves_no_file(tmp_path, monkeypatch, capsys):
    _fail_at_frame(monkeypatch, 5, RuntimeError("boom"))
    assert _extract(tmp_path, sample_clip()) == 1
    assert list(tmp_path.iterdir()) == []  # neither a result nor its temporary
    assert f"failed {sample_clip()}: RuntimeError: boom" in capsys.readouterr().err


def test_ctrl_c_keeps_finished_files(tmp_path, monkeypatch, capsys, single):
    _fail_at_frame(monkeypatch, FRAMES + 5, KeyboardInterrupt())  # in the second video
    assert _extract(tmp_path, sample_clip(), people_clip()) == 130
    assert [p.name for p in tmp_path.iterdir()] == ["sample.parquet"]
    assert (tmp_path / "sample.parquet").read_bytes() == single[1]["sample.parquet"]
    assert "interrupted: 1 finished files kept" in capsys.readouterr().err


def test_bad_inputs_one_line_each(tmp_path, capsys):
    text = tmp_path / "notes.mp4"
    text.write_text("not a video")
    out = tmp_path / "out"
    code = _extract(out, tmp_path / "gone.mp4", text, tmp_path / "nothing*.mp4", sample_clip())
    assert code == 1
    assert [p.name for p in out.iterdir()] == ["sample.parquet"]
    err = capsys.readouterr().err
    lines = [ln for ln in err.splitlines() if ln.startswith("engine-extract: failed ")]
    assert len(lines) == 3, lines
    assert any(f"{tmp_path / 'gone.mp4'}: no such file" in ln for ln in lines)
    assert any(f"{text}: not a readable video" in ln for ln in lines)
    assert any("nothing*.mp4: no file matches this glob" in ln for ln in lines)
    assert "Traceback" not in err and "1 done (20 frames), 0 skipped, 3 failed" in err


def test_an_option_the_solution_does_not_take(tmp_path, capsys):
    args = ["face-detection", str(sample_clip()), "--out", str(tmp_path), "--max-num-hands", "2"]
    assert main(args) == 2
    assert capsys.readouterr().err.strip() == (
        "engine-extract: error: face-detection takes no --max-num-hands"
    )


@pytest.mark.parametrize("module, flag", [("ray", ["--ray"]), ("pyarrow", [])])
def test_missing_extra_is_one_line_exit_2(tmp_path, monkeypatch, capsys, module, flag):
    monkeypatch.setitem(sys.modules, module, None)  # import raises ImportError
    assert _extract(tmp_path, sample_clip(), extra=flag) == 2
    err = capsys.readouterr().err.strip()
    extra = "ray" if module == "ray" else "extract"
    assert err.startswith("engine-extract: error:") and f"pip install 'webgpu-ar[{extra}]'" in err
    assert list(tmp_path.iterdir()) == []


def test_ray_two_workers_gives_the_same_bytes(tmp_path, single, capsys):
    ray = pytest.importorskip("ray")
    from engine.tools.extract.cluster import local_ray_options

    gone = tmp_path / "gone.mp4"  # fails in its task, reported as in one process
    out = tmp_path / "out"
    ray.init(num_cpus=2, **local_ray_options())
    try:
        assert _extract(out, sample_clip(), gone, people_clip(), extra=["--ray"]) == 1
    finally:
        ray.shutdown()
    assert {p.name: p.read_bytes() for p in sorted(out.iterdir())} == single[1]
    err = capsys.readouterr().err
    assert f"engine-extract: failed {gone}: no such file" in err
    assert "2 done (40 frames), 0 skipped, 1 failed" in err
