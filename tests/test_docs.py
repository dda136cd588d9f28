"""The examples in README.md and docs/vision.md run as doctests (models and sample media
from the fetch steps; a GPU adapter)."""

from __future__ import annotations

import doctest

import pytest

from tests.helpers.files import ASSETS_DIR, CORE_MODELS, ROOT, model_file
from tests.helpers.gpu import gpu_context

gpu_context()
# what docs/vision.md's examples run besides the core models
VISION_MODELS = ("palm_detection_full", "hand_landmark_full", "pose_detection",
                 "pose_landmark_full", "hand_recrop")  # fmt: skip


@pytest.mark.parametrize("doc", ["README.md", "docs/vision.md"])
def test_doc_examples_run(doc):
    for name in CORE_MODELS + VISION_MODELS:
        model_file(name)
    for media in ("astronaut.png", "sample.mp4", "people.mp4"):
        if not (ASSETS_DIR / media).exists():
            pytest.skip(f"{ASSETS_DIR / media} missing: run `make assets`")
    result = doctest.testfile(str(ROOT / doc), module_relative=False, verbose=False,
                              optionflags=doctest.NORMALIZE_WHITESPACE)  # fmt: skip
    assert result.attempted > 0 and result.failed == 0, result
