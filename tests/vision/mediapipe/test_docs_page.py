"""docs/mediapipe.md's example runs as a doctest (the hand models, people.mp4, an adapter:
backend "auto" decides from it)."""

from __future__ import annotations

import doctest

from tests.helpers.files import ROOT, model_file
from tests.helpers.gpu import gpu_context
from tests.helpers.media import people_clip

gpu_context()


def test_the_page_example_runs():
    for name in ("palm_detection_full", "hand_landmark_full"):
        model_file(name)
    people_clip()
    flags = doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS
    result = doctest.testfile(str(ROOT / "docs" / "mediapipe.md"), module_relative=False,
                              optionflags=flags)  # fmt: skip
    assert result.attempted > 5 and result.failed == 0, result
