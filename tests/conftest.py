"""Shared fixtures: where the fetched models and sample media live."""

from __future__ import annotations

import os
import tempfile

import pytest

# The engine's disk caches (tuned work groups, the heuristic memo, compiled templates) go
# to a fresh folder per pytest run: tests see what a new machine sees and never write
# into the user's cache. Set before any engine module reads its settings.
os.environ.setdefault("ENGINE_CACHE_DIR", tempfile.mkdtemp(prefix="webgpu-ar-test-cache-"))
# The helpers' asserts report their operands too (and two of them are plugins, below).
pytest.register_assert_rewrite("tests.helpers")

from tests.helpers.ci import missing  # noqa: E402  (after ENGINE_CACHE_DIR is set)
from tests.helpers.files import ASSETS_DIR  # noqa: E402

# The skip ledger and CI's rules (tests/helpers/ci.py); the tier markers (tests/helpers/tiers.py);
# a hung test's stacks in the run's output, its processes killed (tests/helpers/hangs.py).
pytest_plugins = ("tests.helpers.ci", "tests.helpers.tiers", "tests.helpers.hangs")


def _stable_hypothesis() -> None:
    """Hypothesis draws from a seed derived from each test (derandomize): a failure comes back
    on every run of the same test id, in CI and at a desk alike."""
    from hypothesis import settings

    settings.register_profile("stable", derandomize=True, deadline=None, print_blob=True)
    settings.load_profile("stable")


_stable_hypothesis()


@pytest.fixture(autouse=True)
def _fresh_settings():
    """Each test sees the environment as it is (engine/config.py reads it once)."""
    from engine import config

    yield
    config.reload()


@pytest.fixture(scope="session")
def astronaut_rgb():
    """The astronaut still as an RGB uint8 array (HxWx3)."""
    import cv2

    path = ASSETS_DIR / "astronaut.png"
    if not path.exists():
        missing(f"{path} missing: run `make assets`")
    bgr = cv2.imread(str(path), cv2.IMREAD_COLOR)
    return bgr[:, :, ::-1].copy()
