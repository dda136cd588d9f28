"""CI's rules for a test run (tests/helpers/ci.py): a missing prerequisite fails in CI and
skips elsewhere; an unexpected skip fails a CI run; the tier markers select by need."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.helpers import ci, tiers
from tests.helpers.files import ROOT


def test_missing_skips_at_a_desk_and_fails_in_ci(monkeypatch):
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match="no adapter"):
        ci.missing("no adapter")
    for value in ("true", "1", "yes"):
        monkeypatch.setenv("CI", value)
        with pytest.raises(pytest.fail.Exception, match="CI=true: no adapter"):
            ci.missing("no adapter")


def test_the_allow_list_is_short_and_explained():
    assert len(ci.EXPECTED_SKIPS) <= 5
    assert all(len(why) > 20 for why in ci.EXPECTED_SKIPS.values())
    assert ci.expected_skip("could not import 'xgboost': No module named 'xgboost'")
    for reason in ("no WebGPU adapter: none found", "adapter lacks shader-f16",
                   "models/face_landmark.tflite not fetched: run `make models`"):  # fmt: skip
        assert ci.expected_skip(reason) is None, reason


SAMPLE = """
import pytest

def test_passes():
    pass

def test_allowed():
    pytest.skip("could not import 'xgboost': No module named 'xgboost'")

def test_odd():
    pytest.skip("something went wrong and was hidden")

@pytest.mark.gpu
def test_on_gpu():
    pass
"""


def _run(tmp_path, ci_value: str, *args: str) -> subprocess.CompletedProcess:
    (tmp_path / "test_sample.py").write_text(SAMPLE)
    (tmp_path / "pytest.ini").write_text("[pytest]\nmarkers =\n    gpu: x\n")
    env = {**os.environ, "CI": ci_value, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "tests.helpers.ci", "-p", "tests.helpers.tiers",
         "-p", "no:cacheprovider", "test_sample.py", *args],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip


def test_an_unexpected_skip_fails_a_ci_run_only(tmp_path):
    local = _run(tmp_path, "")
    assert local.returncode == 0, local.stdout
    assert "ci: 2 skipped, 1 on the allow-list" in local.stdout
    assert "test_odd: something went wrong" in local.stdout
    assert "ci: adapters used: none" in local.stdout
    in_ci = _run(tmp_path, "true")
    assert in_ci.returncode == 1, in_ci.stdout
    assert "CI=true fails on an unexpected skip" in in_ci.stdout


def test_markers_select_tiers(tmp_path):
    got = _run(tmp_path, "", "-m", "not gpu")
    assert got.returncode == 0 and "1 deselected" in got.stdout, got.stdout


def test_tier_selection_follows_the_mark_expression():
    """A module of a tier is skipped unimported only when no test of it could be kept: a
    gpu test may be slow too, so -m slow keeps the gpu modules."""
    for expr, gpu, gl in [("", True, True), ("not slow", True, True), ("slow", True, True),
                          ("not gpu and not gl and not slow", False, False),
                          ("not gpu", False, True), ("gl and not slow", True, True),
                          ("not gl", True, False)]:  # fmt: skip
        assert (tiers.selected("gpu", expr), tiers.selected("gl", expr)) == (gpu, gl), expr
