"""engine-inspect: the report's figures and its error path."""

from __future__ import annotations

import json
import subprocess
import sys

from engine.tools.inspect_cli import main
from tests.helpers.files import ROOT, model_file


def test_json_report(capsys):
    path = model_file("face_detection_short_range")
    assert main([str(path), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["inputs"][0]["shape"] == [1, 128, 128, 3]
    assert report["op_histogram"]["CONV_2D"] == 21
    assert sum(report["op_histogram"].values()) == report["op_count"]
    # First conv: 64x64x24 outputs, 5x5x3 kernel -> 2 * 98304 * 75 FLOPs.
    assert report["flops_per_op"][0]["flops"] == 2 * 64 * 64 * 24 * 5 * 5 * 3
    assert 0.06e9 < report["flops"] < 0.065e9  # MediaPipe quotes ~0.062 GFLOP (convs only)
    assert report["parameters"] > 100_000


def test_bad_file_is_one_line_exit_2(tmp_path):
    bad = tmp_path / "broken.tflite"
    bad.write_bytes(b"\x00" * 64)
    proc = subprocess.run(
        [sys.executable, "-m", "engine.tools.inspect_cli", str(bad)],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0 and str(bad) in proc.stderr
    assert "Traceback" not in proc.stderr


def test_memory_table(capsys):
    path = model_file("face_detection_short_range")
    assert main([str(path), "--memory", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["memory"]
    by_name = {(r["precision"], r["strategy"]): r for r in rows}
    for precision in ("fp32", "fp16"):
        naive = by_name[(precision, "naive")]
        for name in ("greedy", "greedy_by_size", "mincostflow", "arena"):
            row = by_name[(precision, name)]
            assert row["lower_bound"] <= row["total_bytes"] <= naive["total_bytes"]
        assert by_name[(precision, "arena")]["ratio"] == 1.0  # the exact search: 1.26 before
    assert (
        by_name[("fp16", "naive")]["total_bytes"] * 2 == by_name[("fp32", "naive")]["total_bytes"]
    )
