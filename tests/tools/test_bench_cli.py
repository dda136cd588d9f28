"""engine-bench: report structure, peers' skip rows, single-op mode, error path.

Fast settings only (--runs 2 --warmup 1); no assertion on any timing value.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from engine.model.cost import flops_by_op
from engine.model.importer import load_tflite
from engine.tools.bench import peers
from engine.tools.bench.report import LATENCY_HEADER, latency_rows, markdown
from engine.tools.bench.single_op import bench_graph, parse_shape
from engine.tools.bench_cli import main
from tests.helpers.files import ROOT, model_file

FAST = ["--runs", "2", "--warmup", "1", "--ab-rounds", "2", "--ab-block", "1"]


def _needs_adapter():
    from tests.helpers.gpu import gpu_context

    gpu_context()


@pytest.fixture(scope="module")
def face_report(tmp_path_factory):
    """One engine + LiteRT (1 thread) run of face detection, shared by the tests below."""
    _needs_adapter()
    path = model_file("face_detection_short_range")
    out = tmp_path_factory.mktemp("bench")
    argv = [str(path), *FAST, "--peers", "litert", "--threads", "1"]
    argv += ["--json", str(out / "r.json"), "--markdown", str(out / "r.md")]
    rc = main(argv)
    return rc, json.loads((out / "r.json").read_text()), (out / "r.md").read_text(), path


@pytest.mark.gpu
def test_json_structure(face_report):
    rc, doc, _, path = face_report
    assert rc == 0
    machine = doc["machine"]
    assert machine["adapter"] and machine["cpu_count"] >= 1
    assert {"python", "versions"} <= machine.keys() and "wgpu" in machine["versions"]
    assert doc["settings"]["runs"] == 2 and doc["settings"]["warmup"] == 1
    (model,) = doc["models"]
    graph = load_tflite(path)
    assert model["op_count"] == len(graph.ops)  # after import: DEQUANTIZE folded
    assert model["flops"] == sum(r.flops for r in flops_by_op(graph))
    eng = model["engine"]
    assert eng["status"] == "ok", eng.get("reason")
    assert set(eng["time_ms"]) == {"runs", "mean", "median", "min", "p90", "max"}
    assert eng["time_ms"]["runs"] == 2
    assert eng["time_ms"]["min"] <= eng["time_ms"]["median"] <= eng["time_ms"]["max"]
    assert eng["dispatch_count"] > 0 and eng["op_count"] == model["op_count"]
    assert eng["dispatches_per_op"] == pytest.approx(eng["dispatch_count"] / eng["op_count"])
    assert isinstance(eng["fallback_ops"], list)
    assert eng["storage"] in ("buffer", "texture") and eng["storage_requested"] == "auto"
    assert doc["settings"]["storage"] == "auto"
    assert {"wait_ms", "wait_cpu_ms", "dispatches", "submits"} <= eng["per_run"].keys()
    init = eng["init"]
    assert {"import_ms", "device_ms", "engine_phases_ms", "first_run_ms", "total_ms"} <= init.keys()
    assert "available" in eng["gpu_time"] and "available" in eng["resident"]
    if not eng["gpu_time"]["available"]:
        assert eng["gpu_time"]["reason"]
    assert "outputs" not in eng  # numpy arrays stay out of the JSON


@pytest.mark.gpu
def test_interleaved_ab_and_load(face_report):
    rc, doc, text, _ = face_report
    (model,) = doc["models"]
    assert {"cpus", "load_before", "load_after", "busy"} <= model["load"].keys()
    rows = model["ab"]
    assert [r["peer"] for r in rows] == ["litert-xnnpack t=1"]
    assert rows[0]["rounds"] == 2 and rows[0]["engine_init_ms"] > 0
    assert rows[0]["max_error"] is not None and rows[0]["max_error"] < 1e-3
    assert "Interleaved A/B" in text and '"_run"' not in json.dumps(doc)


@pytest.mark.gpu
def test_litert_row_and_cross_check(face_report):
    _, doc, _, _ = face_report
    (model,) = doc["models"]
    (row,) = model["peers"]
    assert row["backend"] == "litert-xnnpack" and row["threads"] == 1
    assert row["status"] == "ok" and row["time_ms"]["runs"] == 2
    # Same random inputs on both: the engine's outputs match LiteRT's.
    assert model["engine"]["max_error_vs_litert"] < 1e-3


@pytest.mark.gpu
def test_markdown_table(face_report, capsys):
    _, doc, md, _ = face_report
    header = "| " + " | ".join(LATENCY_HEADER) + " |"
    assert header in md
    kind = doc["models"][0]["engine"]["storage"]  # the storage kind used is reported
    assert f"face_detection_short_range | engine (fp32, sleep, {kind})" in md
    assert "Init (ms):" in md and "GPU time per op" in md
    assert len(doc["table"]["rows"]) == 2


@pytest.mark.gpu
def test_single_op_mode(capsys):
    _needs_adapter()
    argv = ["--op", "conv1x1", "--shape", "8x8x8", *FAST, "--peers", "litert", "--threads", "1"]
    rc = main([*argv, "--storage", "texture"])
    out = capsys.readouterr().out
    assert rc == 0
    assert "conv1x1@8x8x8 | engine (fp32, sleep, texture)" in out
    assert "storage texture" in out
    assert "conv1x1@8x8x8 | litert-xnnpack t=1" in out


def test_bench_graphs():
    assert parse_shape("128x64x32") == (128, 64, 32)
    with pytest.raises(ValueError):
        parse_shape("128x64")
    flops = {
        name: sum(r.flops for r in flops_by_op(bench_graph(name, (4, 5, 8))))
        for name in ("conv3x3", "conv1x1", "depthwise3x3")
    }
    assert flops == {
        "conv3x3": 2 * 4 * 5 * 8 * 9 * 8,
        "conv1x1": 2 * 4 * 5 * 8 * 8,
        "depthwise3x3": 2 * 4 * 5 * 8 * 9,
    }


def test_bad_file_is_one_line_exit_2(tmp_path):
    bad = tmp_path / "broken.tflite"
    bad.write_bytes(b"\x00" * 64)
    for target in (bad, tmp_path / "missing.tflite"):
        proc = subprocess.run(
            [sys.executable, "-m", "engine.tools.bench_cli", str(target), "--peers", "none"],
            capture_output=True,
            text=True,
            cwd=ROOT,
        )
        assert proc.returncode == 2, proc.stderr
        assert proc.stderr.strip().count("\n") == 0 and str(target) in proc.stderr
        assert "Traceback" not in proc.stderr


def test_bad_arguments_exit_2(capsys):
    for argv in (["--peers", "tensorrt", "x.tflite"], [], ["--op", "conv3x3", "--shape", "3x3"]):
        with pytest.raises(SystemExit) as exc:
            main(argv)
        assert exc.value.code == 2
    capsys.readouterr()


def test_onnx_peer_skips_with_a_reason(tmp_path):
    src = peers.ModelSource("m", b"")
    row = peers.onnx_row(src, b"", 2, 1, str(tmp_path / "no-python"))
    assert row["status"] == "skipped" and "no such interpreter" in row["reason"]
    row = peers.onnx_row(src, b"", 2, 1, None)
    assert row["status"] == "skipped" and peers.ONNX_PYTHON_ENV in row["reason"]


def test_litert_gpu_row_is_ok_or_says_why():
    pytest.importorskip("ai_edge_litert")
    path = model_file("face_detection_short_range")
    src = peers.ModelSource(path.stem, path.read_bytes(), str(path))
    feeds = {"input": np.zeros((1, 128, 128, 3), np.float32)}
    row = peers.litert_gpu_row(src, feeds, runs=1, warmup=1)
    if row["status"] == "ok":  # a GPU LiteRT accepts: its outputs are the model's
        from ai_edge_litert.interpreter import Interpreter

        it = Interpreter(model_path=str(path))
        it.allocate_tensors()
        it.set_tensor(it.get_input_details()[0]["index"], feeds["input"])
        it.invoke()
        want = sorted(it.get_tensor(d["index"]).size for d in it.get_output_details())
        assert sorted(np.asarray(v).size for v in row["outputs"].values()) == want
        return
    # The one way to fail that says why: LiteRT's accelerator refused (no GPU here, as on
    # lavapipe machines: "No adapters found"); a failure after creating the model, or a
    # row without LiteRT's reason, is the harness's bug.
    assert row["status"] == "failed", row
    assert row["reason"].startswith("accelerator refused: GPU: "), row["reason"]
    assert len(row["reason"]) > len("accelerator refused: GPU: ") + 10
    assert "\n" not in row["reason"]


def test_failed_engine_row_in_table():
    res = {
        "model": "m",
        "flops": 10,
        "engine": peers.skipped("engine", "ModelError: op #3 FOO", status="failed"),
        "peers": [peers.skipped("ort", "not installed")],
    }
    rows = latency_rows([res])
    assert rows[0][-1] == "failed: ModelError: op #3 FOO"
    assert rows[1][-1] == "skipped: not installed"
    text = markdown([res], {"versions": {}}, {"runs": 1, "warmup": 0, "precision": "fp32",
                                             "sync": "sleep", "transforms": True})  # fmt: skip
    assert "failed: ModelError" in text


def test_onnx_peer_finds_a_relative_interpreter_and_reports_a_broken_one(tmp_path, monkeypatch):
    """--onnx-python as a path relative to the caller (the worker runs in a temp dir) or a
    name on PATH; an interpreter that cannot start is a failed row, not a crash."""
    fake = tmp_path / "fakepy"  # prints what onnx_worker.py prints, whatever it is given
    result = {
        "status": "ok",
        "time_ms": {"median": 1.0},
        "node_providers": {"WebGpuExecutionProvider": 3},
    }
    fake.write_text(f"#!/bin/sh\necho '{json.dumps(result)}'\n")
    fake.chmod(0o755)
    monkeypatch.chdir(tmp_path)
    src = peers.ModelSource("m", b"")
    row = peers.onnx_row(src, b"", 2, 1, "./fakepy")
    assert row["status"] == "ok" and row["backend"] == "ort-webgpu", row
    monkeypatch.setenv("PATH", f"{tmp_path}:{os.environ['PATH']}")
    assert peers.onnx_row(src, b"", 2, 1, "fakepy")["status"] == "ok"
    broken = tmp_path / "brokenpy"
    broken.write_text("#!/no/such/interpreter\n")
    broken.chmod(0o755)
    row = peers.onnx_row(src, b"", 2, 1, str(broken))
    assert row["status"] == "failed" and "brokenpy" in row["reason"], row
