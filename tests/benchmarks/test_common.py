"""benchmarks/common.py: the stamp's fields, the load record, the markdown and the JSON."""

from __future__ import annotations

import json
import os
import subprocess
from datetime import UTC, datetime, timedelta
from types import SimpleNamespace

import pytest

from benchmarks.common import (
    Bench,
    adapter_record,
    command_line,
    git_commit,
    probe_adapter,
    table,
)
from engine.tools.bench import load

LAVAPIPE = SimpleNamespace(
    info={"device": "llvmpipe (LLVM 15.0.7, 256 bits)", "backend_type": "Vulkan",
          "adapter_type": "CPU", "vendor": "Mesa"},
    name="llvmpipe (LLVM 15.0.7, 256 bits) (Vulkan)",
    features=frozenset({"timestamp-query"}),
)  # fmt: skip


@pytest.fixture
def loads(monkeypatch):
    """Two usable CPUs; the load average each LoadGate reads, in turn."""
    seq = [(1.5, 1.0, 0.5), (0.25, 0.5, 0.5)]
    monkeypatch.setattr(load, "usable_cpus", lambda: 2)
    monkeypatch.setattr(load, "load_average", lambda: seq.pop(0) if len(seq) > 1 else seq[0])
    return seq


def test_the_command_line_runs_the_script_again():
    assert command_line("benchmarks.engine.tile_sweep", ["m.tflite", "--variants", "a, b"]) == (
        "python -m benchmarks.engine.tile_sweep m.tflite --variants 'a, b'"
    )
    assert command_line("benchmarks.fuzz.__main__", []) == "python -m benchmarks.fuzz"


def test_git_commit_and_dirty_tracked_files_only(tmp_path):
    assert git_commit(tmp_path) == (None, False)  # not a checkout

    def git(*args):
        return subprocess.run(["git", "-C", str(tmp_path), "-c", "user.name=t",
                               "-c", "user.email=t@t", *args], capture_output=True, text=True,
                              check=True).stdout.strip()  # fmt: skip

    git("init", "-q")
    (tmp_path / "a.py").write_text("x = 1\n")
    git("add", "a.py")
    git("commit", "-q", "-m", "one")
    head = git("rev-parse", "HEAD")
    (tmp_path / "results.json").write_text("{}")  # untracked: still clean
    assert git_commit(tmp_path) == (head, False)
    (tmp_path / "a.py").write_text("x = 2\n")
    assert git_commit(tmp_path) == (head, True)


def test_stamp_fields(loads):
    bench = Bench("benchmarks.engine.dispatch_cost", ["--repeat", "2"])
    s = bench.stamp()
    assert list(s) == ["command", "date", "commit", "dirty", "adapter", "machine", "load"]
    assert s["command"] == "python -m benchmarks.engine.dispatch_cost --repeat 2"
    assert s["date"].endswith("Z")
    when = datetime.fromisoformat(s["date"].removesuffix("Z")).replace(tzinfo=UTC)
    assert abs(datetime.now(UTC) - when) < timedelta(minutes=5)
    assert (s["commit"], s["dirty"]) == git_commit()
    assert s["adapter"] is None and "adapter" not in s["machine"]  # no adapter used
    assert s["machine"]["usable_cpus"] >= 1 and "numpy" in s["machine"]["versions"]


def test_load_record_around_the_work(loads):
    bench = Bench("benchmarks.x", [])  # the gate's first reading: 1.5 on 2 CPUs
    rec = bench.stamp()["load"]  # the second, after the work
    assert rec["load_before"] == (1.5, 1.0, 0.5) and rec["load_after"] == (0.25, 0.5, 0.5)
    assert rec["cpus"] == 2 and rec["per_cpu"] == 0.75 and rec["busy"]
    assert "load 1.50, 0.25 after on 2 CPUs (busy)" in bench.header()
    loads[:] = [(9.0, 9.0, 9.0)]
    assert bench.stamp()["load"]["load_after"] == (0.25, 0.5, 0.5)  # recorded once
    loads[:] = [(1.5, 1.0, 0.5)]
    assert not Bench("benchmarks.x", [], max_load=1.0).stamp()["load"]["busy"]  # 0.75 <= 1


def test_adapter_name_backend_and_class():
    assert adapter_record(LAVAPIPE) == {"name": "llvmpipe (LLVM 15.0.7, 256 bits)",
                                        "backend": "Vulkan", "class": "llvmpipe"}  # fmt: skip
    bench = Bench("benchmarks.x", [])
    assert bench.use(LAVAPIPE) is LAVAPIPE
    s = bench.stamp()
    assert s["adapter"]["class"] == "llvmpipe" and s["machine"]["adapter"] == LAVAPIPE.name
    assert "adapter: llvmpipe (LLVM 15.0.7, 256 bits) (Vulkan, llvmpipe);" in bench.header()
    h100 = {"name": "NVIDIA H100", "backend": "Vulkan", "class": "gpu"}  # a child's record
    assert "adapter: NVIDIA H100 (Vulkan, gpu);" in Bench("benchmarks.x", [], h100).header()
    later = Bench("benchmarks.x", [])
    later.adapter = h100  # sent back by a child after the Bench started
    assert later.stamp()["adapter"] == h100


def test_report_prints_the_stamp_line_then_the_table_and_writes_the_json(loads, tmp_path,
                                                                          capsys):  # fmt: skip
    bench = Bench("benchmarks.x", ["--json", "out.json"])
    text = "\n".join(table(["model", "ms"], [["face|mesh", 1.5]], "lr"))
    path = tmp_path / "deep" / "out.json"
    bench.report(text + "\n", {"rows": [{"model": "face_mesh", "ms": 1.5}]}, path)
    out = capsys.readouterr().out.splitlines()
    assert out[0] == bench.header() and out[0].startswith("command: `python -m benchmarks.x")
    assert "; date: " in out[0] and "; commit: " in out[0] and "; adapter: none; " in out[0]
    assert out[1:] == ["", "| model | ms |", "|---|---:|", "| face/mesh | 1.5 |"]
    doc = json.loads(path.read_text())
    assert list(doc) == ["stamp", "rows"] and doc["rows"] == [{"model": "face_mesh", "ms": 1.5}]
    assert doc["stamp"] == json.loads(json.dumps(bench.stamp()))
    assert doc["stamp"]["load"]["load_before"] == [1.5, 1.0, 0.5]


def test_report_without_json_only_prints(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Bench("benchmarks.x", []).report("text", {"rows": []})
    assert capsys.readouterr().out.endswith("\n\ntext\n") and not list(tmp_path.iterdir())


@pytest.mark.gpu
def test_probe_adapter_names_the_adapter_a_fresh_process_picks():
    from tests.helpers.gpu import gpu_context

    ctx = gpu_context()  # skips without an adapter
    assert probe_adapter() == adapter_record(ctx)
    assert probe_adapter({**os.environ, "ENGINE_ADAPTER": "no-such-adapter"}) is None
