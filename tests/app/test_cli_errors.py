"""ar-demo's errors a person can fix: one line on stderr, exit 2, no traceback."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from app.cli import main
from tests.helpers.files import ROOT, model_file
from tests.helpers.media import sample_clip


def _run(*args: str, env: dict | None = None):
    proc = subprocess.run([sys.executable, "-m", "app.cli", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc.returncode, [line for line in proc.stderr.splitlines() if line.strip()]


def _fails_with(args, *words, env: dict | None = None):
    """Exit 2 and stderr is exactly one line, the error (no other line before or after)."""
    code, lines = _run(*args, env=env)
    assert code == 2 and len(lines) == 1, (code, lines)
    assert lines[0].startswith("ar-demo: error:"), lines[0]
    for w in words:
        assert w in lines[0], lines[0]


def test_help_documents_every_option():
    proc = subprocess.run([sys.executable, "-m", "app.cli", "--help"], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)  # fmt: skip
    assert proc.returncode == 0
    for opt in ("--model", "--solution", "--input", "--headless", "--output", "--effect", "--sync",
                "--planner", "--precision", "--frames", "--stats", "--hud", "--no-hud",
                "--adapter", "--style", "--object", "--texture", "--max-faces"):  # fmt: skip
        assert opt in proc.stdout, opt


def test_solution_or_model_not_both_nor_neither():
    _fails_with(["--solution", "hands", "--model", "models/pose_detection.tflite"],
                "--solution", "not both")  # fmt: skip
    _fails_with(["--headless", "--input", "assets/sample.mp4"], "--solution NAME")


def test_unknown_solution_is_a_usage_error():
    code, _ = _run("--solution", "holistics")
    assert code == 2


def test_missing_model():
    _fails_with(["--model", "models/no_such_model.tflite"], "model not found")


def test_unreadable_model(tmp_path):
    bad = tmp_path / "bad.tflite"
    bad.write_bytes(b"not a flatbuffer")
    _fails_with(["--model", str(bad)], "bad.tflite")


def test_missing_and_unreadable_video(tmp_path):
    seg = str(model_file("selfie_segmentation"))
    _fails_with(["--model", seg, "--input", str(tmp_path / "nope.mp4"), "--headless"],
                "no such file")  # fmt: skip
    junk = tmp_path / "junk.mp4"
    junk.write_bytes(b"\x00" * 1000)
    _fails_with(["--model", seg, "--input", str(junk), "--headless"], "junk.mp4")


def test_no_camera_suggests_input_file(tmp_path):
    seg = str(model_file("selfie_segmentation"))  # headless: a window would need a display
    _fails_with(["--model", seg, "--input", "9", "--headless", "--frames", "3", "--output",
                 str(tmp_path / "o.mp4")], "camera", "--input FILE")  # fmt: skip


def test_outputs_fit_no_effect():
    _fails_with(["--model", str(model_file("iris_landmark")), "--input", str(sample_clip())],
                "--effect")  # fmt: skip


def test_effect_without_its_models():
    seg = str(model_file("selfie_segmentation"))
    _fails_with(["--model", seg, "--effect", "face-mesh", "--input", str(sample_clip())],
                "needs a detection")  # fmt: skip


def test_no_adapter_says_how_to_install_a_driver(monkeypatch, capsys, tmp_path):
    """No WebGPU adapter at all (simulated: enumeration returns none) -> driver hint."""
    pytest.importorskip("wgpu")
    import wgpu
    import wgpu.backends.wgpu_native  # noqa: F401  (replaces wgpu.gpu: patch the real one)

    import engine.gpu.device as device

    monkeypatch.setattr(device, "_shared", {})
    monkeypatch.setattr(wgpu.gpu, "enumerate_adapters_sync", lambda: [])
    code = main(["--model", str(model_file("selfie_segmentation")), "--input",
                 str(sample_clip()), "--headless", "--frames", "1", "--output",
                 str(tmp_path / "o.mp4")])  # fmt: skip
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1
    assert "no WebGPU adapter" in err[0] and "mesa-vulkan-drivers" in err[0]


@pytest.mark.gpu
def test_adapter_that_does_not_exist():
    _fails_with(["--model", str(model_file("selfie_segmentation")), "--input", str(sample_clip()),
                 "--headless", "--adapter", "no-such-gpu"], "no-such-gpu")  # fmt: skip


# --- start-up checks: before any model compiles, one line, exit 2, no C-level abort -------
def _env(**changes) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    return {**env, **changes}


@pytest.mark.gpu
def test_window_without_a_display_is_one_line_not_sigabrt():
    """GLFW used to abort (SIGABRT, exit 134) in glfwSetFramebufferSizeCallback."""
    args = ["--model", str(model_file("selfie_segmentation")), "--input", str(sample_clip())]
    _fails_with(args, "no display", "--headless", env=_env())
    _fails_with(args, "GLFW cannot start", env=_env(DISPLAY=":97"))  # no server there


def test_output_without_headless():
    _fails_with(["--model", str(model_file("selfie_segmentation")), "--input", str(sample_clip()),
                 "--output", "out/x.mp4"], "--headless")  # fmt: skip


def test_bad_output_extension_is_found_before_the_input(tmp_path):
    """The output is checked before the camera (and so long before the compile)."""
    _fails_with(["--model", str(model_file("selfie_segmentation")), "--input", "9",
                 "--headless", "--frames", "3", "--output", str(tmp_path / "out.txt")],
                "extension '.txt'", ".mp4")  # fmt: skip


def test_output_folder_that_cannot_exist(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    seg = str(model_file("selfie_segmentation"))
    _fails_with(["--model", seg, "--input", str(sample_clip()), "--headless", "--output",
                 str(blocker / "out.mp4")], "cannot create the folder")  # fmt: skip
    _fails_with(["--model", seg, "--input", str(sample_clip()), "--headless", "--output",
                 str(tmp_path)], "extension")  # fmt: skip
    (tmp_path / "dir.mp4").mkdir()
    _fails_with(["--model", seg, "--input", str(sample_clip()), "--headless", "--output",
                 str(tmp_path / "dir.mp4")], "is a directory")  # fmt: skip


def test_stats_path_checked_at_start(tmp_path):
    (tmp_path / "s.json").mkdir()
    _fails_with(["--model", str(model_file("selfie_segmentation")), "--input", str(sample_clip()),
                 "--headless", "--output", str(tmp_path / "o.mp4"), "--stats",
                 str(tmp_path / "s.json")], "--stats", "is a directory")  # fmt: skip


def test_irises_need_the_refined_model():
    clip = str(ROOT / "assets" / "sample.mp4")
    _fails_with(["--solution", "face-mesh", "--style", "irises", "--input", clip, "--headless",
                 "--frames", "1"], "--refine-landmarks")  # fmt: skip
    _fails_with(["--solution", "hands", "--refine-landmarks", "--input", clip, "--headless",
                 "--frames", "1"], "--solution face-mesh")  # fmt: skip


@pytest.mark.parametrize("shape", [(1, 1), (1, 50), (40, 1)])
def test_a_frame_the_encoder_cannot_take_is_named_before_compiling(tmp_path, shape):
    """OpenCV's writer refuses a side of 1: the error names the input and its size (not
    the output path), and nothing is written."""
    import cv2
    import numpy as np

    image = tmp_path / "tiny.png"
    cv2.imwrite(str(image), np.zeros((*shape, 3), np.uint8))
    out = tmp_path / "o.mp4"
    _fails_with(["--model", str(model_file("face_detection_short_range")), "--input",
                 str(image), "--headless", "--output", str(out)],
                f"{image} is {shape[1]}x{shape[0]}", "at least 2x2")  # fmt: skip
    assert not out.exists()


def _face_effect_fails_with(tmp_path, option: str, path, *words, style: str = "glasses"):
    """--solution face-mesh headless with `option path`: one line, exit 2, no output file."""
    out = tmp_path / "o.mp4"
    _fails_with(["--solution", "face-mesh", "--style", style, "--input", str(sample_clip()),
                 "--headless", "--frames", "1", "--output", str(out), option, str(path)],
                option, *words)  # fmt: skip
    assert not out.exists()


def test_an_object_that_cannot_be_read(tmp_path):
    _face_effect_fails_with(tmp_path, "--object", tmp_path / "none.obj", "no such file")
    _face_effect_fails_with(tmp_path, "--object", tmp_path, "is a directory")
    glb = tmp_path / "hat.glb"
    glb.write_bytes(b"glTF\x02\x00\x00\x00")
    _face_effect_fails_with(tmp_path, "--object", glb, "not an OBJ file")
    binary = tmp_path / "hat.obj"
    binary.write_bytes(b"\x89\xff\xfe\x00" * 64)
    _face_effect_fails_with(tmp_path, "--object", binary, "not a text file")
    bad = tmp_path / "bad.obj"
    bad.write_text("v 0 0 0\nv 1 zero 0\n")
    _face_effect_fails_with(tmp_path, "--object", bad, "line 2")
    far = tmp_path / "far.obj"
    far.write_text("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 9\n")
    _face_effect_fails_with(tmp_path, "--object", far, "line 4", "vertex 9 of 3")


def test_an_object_with_no_triangles(tmp_path):
    lines = tmp_path / "lines.obj"
    lines.write_text("v 0 0 0\nv 1 0 0\nv 0 1 0\nl 1 2 3\nf 1 2\n")  # a line, a 2-gon
    _face_effect_fails_with(tmp_path, "--object", lines, "no triangles")
    empty = tmp_path / "empty.pbtxt"
    empty.write_text("vertex_type: VERTEX_PT\nprimitive_type: TRIANGLE\n")
    _face_effect_fails_with(tmp_path, "--object", empty, "no triangles")


def test_a_texture_that_cannot_be_read_or_is_of_the_wrong_kind(tmp_path):
    import cv2
    import numpy as np

    _face_effect_fails_with(tmp_path, "--texture", tmp_path / "none.png", "no such file",
                            style="paint")  # fmt: skip
    text = tmp_path / "notes.png"
    text.write_text("not an image")
    _face_effect_fails_with(tmp_path, "--texture", text, "not an image", style="paint")
    _face_effect_fails_with(tmp_path, "--texture", sample_clip(), "not an image", style="paint")
    deep = tmp_path / "deep.png"
    cv2.imwrite(str(deep), np.zeros((8, 8, 3), np.uint16))
    _face_effect_fails_with(tmp_path, "--texture", deep, "uint16", "8 bits", style="paint")


def test_face_effect_options_go_with_the_face_mesh():
    clip = str(sample_clip())
    _fails_with(["--solution", "hands", "--object", "x.obj", "--input", clip, "--headless",
                 "--frames", "1"], "--object goes with the face-mesh effect")  # fmt: skip
    _fails_with(["--solution", "face-mesh", "--max-faces", "0", "--input", clip, "--headless",
                 "--frames", "1"], "--max-faces must be at least 1")  # fmt: skip
