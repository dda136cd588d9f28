"""kernel_bench: families keep every convolution's FLOPs and split the GPU time."""

from __future__ import annotations

import pytest

from benchmarks.engine.kernel_bench import FAMILIES, family, main, profile_model
from engine.model.cost import op_flops
from engine.model.importer import load_tflite
from tests.helpers.files import model_file
from tests.helpers.gpu import gpu_context

gpu_context()  # skips the module where there is no adapter


def test_families_name_the_face_detector_layers():
    g = load_tflite(model_file("face_detection_short_range"))
    fams = [family(g, op) for op in g.ops]
    assert fams[0] == "conv first layer"  # 3-channel input, 5x5 stride 2
    assert {"conv1x1", "depthwise"} <= set(fams) <= set(FAMILIES)


def test_profile_splits_every_flop_and_counts_pipelines():
    path = model_file("hand_recrop")
    row = profile_model(str(path), "buffer", repeats=1)
    g = load_tflite(path)
    fams = row["families"]
    # the convolutions' FLOPs survive fusion unchanged, each in its own family (fused
    # adds and activations leave "other", so it is not compared)
    for name in ("conv first layer", "conv1x1", "conv generic", "depthwise"):
        source = sum(op_flops(g, op) for op in g.ops if family(g, op) == name)
        assert fams.get(name, {"flops": 0})["flops"] == source, name
    assert row["total_gpu_ms"] == pytest.approx(sum(f["gpu_ms"] for f in fams.values()))
    assert row["pipelines"] > 0
    assert all(f["kernels"] for f in fams.values() if f["gpu_ms"] > 0)


def test_cli_prints_a_table(capsys):
    assert main([str(model_file("hand_recrop")), "--storage", "texture", "--repeats", "1"]) == 0
    out = capsys.readouterr().out
    assert "| hand_recrop | texture | total |" in out and "pipelines" in out


@pytest.mark.parametrize(
    "args",
    [["--storage", "nope"], ["--repeats", "0"], ["--ab", "/nonexistent-checkout"]],
    ids=["storage", "repeats", "ab"],
)
def test_cli_refuses_bad_options(args):
    with pytest.raises(SystemExit) as exit_:
        main([str(model_file("hand_recrop")), *args])
    assert exit_.value.code == 2


def test_missing_model_is_one_line_exit_2(tmp_path, capsys):
    assert main([str(tmp_path / "missing.tflite"), "--repeats", "1"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "missing.tflite: no such file" in err[0]
