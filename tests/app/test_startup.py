"""Start-up the user can see, headless: a progress line on stderr from the first model on,
then "ready in X s"; the summary says when the first frame came (seconds since launch)."""

from __future__ import annotations

import json

from app.cli import main
from tests.helpers.files import model_file
from tests.helpers.gpu import gpu_context
from tests.helpers.media import sample_clip

gpu_context()


def test_headless_prints_startup_progress(tmp_path, capfd):
    stats = tmp_path / "stats.json"
    code = main(["--model", str(model_file("selfie_segmentation")), "--input",
                 str(sample_clip()), "--headless", "--output", str(tmp_path / "out.mp4"),
                 "--frames", "2", "--stats", str(stats), "--backend", "webgpu"])  # fmt: skip
    assert code == 0
    err = capfd.readouterr().err
    assert "ar-demo: starting segmentation: selfie_segmentation: planning" in err
    assert "ar-demo: segmentation ready in" in err
    st = json.loads(stats.read_text())["startup_s"]
    assert 0 < st["ready"] <= st["first_frame"]
