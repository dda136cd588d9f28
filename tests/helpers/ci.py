"""A test run as CI must see it: no prerequisite missing in silence, no unexplained skip.

CI is `CI=true` (or 1, yes) in the environment: .ci/run sets it, as CI services do.
- `missing(reason)`: what a test needs is not on this machine (an adapter, a fetched model,
  the sample media, Xvfb): a skip with the reason locally, a failure in CI, where
  `make test` installs all of it and its absence is a broken set-up, not a pass;
- the plugin part (tests/conftest.py loads this module): every skip of the run is counted
  by reason; the summary prints the adapters the run used and the skips; in CI a skip whose
  reason matches no EXPECTED_SKIPS entry fails the run (exit status 1), so a skip that
  hides a failure cannot stay green.
"""

from __future__ import annotations

import os
import re
import sys
from typing import NoReturn

import pytest

from tests.helpers import tiers

# Skips CI may have, each with why it is not a hole in what CI guarantees. Kept short: a
# new entry needs a reason a reviewer accepts (tests/test_ci_plugin.py checks the list).
EXPECTED_SKIPS = {
    r"could not import 'xgboost'": "the `latency` extra (XGBoost baseline) is not in `test`; "
    "engine-latency's own predictors are tested without it",
    r"no zoo models in .*: run python -m benchmarks.engine.model_zoo": "the keras zoo is "
    "built with TensorFlow (a side venv, benchmarks/engine/model_zoo.py), which CI does not "
    "install; the committed small set (tests/data/quant) runs in tests/gpu/test_quant_models",
}


def in_ci() -> bool:
    """Is this run CI's? (`CI` set to true, 1 or yes)"""
    return os.environ.get("CI", "").strip().lower() in ("1", "true", "yes")


def missing(reason: str) -> NoReturn:
    """A prerequisite of the calling test (or module) is absent: skip locally, fail in CI."""
    if in_ci():
        pytest.fail(f"CI=true: {reason} (a skip here would hide the tests that need it)",
                    pytrace=False)  # fmt: skip
    pytest.skip(reason, allow_module_level=True)


def expected_skip(reason: str) -> str | None:
    """The allow-list's explanation for a skip `reason`, or None."""
    for pattern, why in EXPECTED_SKIPS.items():
        if re.search(pattern, reason):
            return why
    return None


def _reason(report) -> str:
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2]).removeprefix("Skipped: ")
    return str(longrepr)


_skips: list[tuple[str, str]] = []  # (node id, reason) of every skip of this run


def pytest_runtest_logreport(report):
    if report.skipped:
        _skips.append((report.nodeid, _reason(report)))


def pytest_collectreport(report):
    if report.skipped and not _reason(report).startswith(tiers.NOT_SELECTED):
        _skips.append((report.nodeid, _reason(report)))  # a module-level skip: all its tests


def _unexpected() -> list[tuple[str, str]]:
    return [(node, why) for node, why in _skips if expected_skip(why) is None]


_worker_adapters: set[str] = set()  # under pytest-xdist: what the workers reported


def adapters_used() -> list[str]:
    """The WebGPU adapters this run made devices on (engine/gpu/device.py contexts): this
    process's, and under pytest-xdist those each worker reported when it finished."""
    device = sys.modules.get("engine.gpu.device")
    mine = set() if device is None else {ctx.name for ctx in device._shared.values()}
    return sorted(mine | _worker_adapters)


@pytest.hookimpl(optionalhook=True)  # pytest-xdist's hook: a worker finished
def pytest_testnodedown(node, error):
    _worker_adapters.update(getattr(node, "workeroutput", {}).get("adapters", ()))


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session, exitstatus):
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:  # a pytest-xdist worker: its adapters go to the controller
        workeroutput["adapters"] = adapters_used()
    if in_ci() and _unexpected() and session.exitstatus == 0:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    write = terminalreporter.write_line
    write(f"ci: adapters used: {'; '.join(adapters_used()) or 'none'}")
    unexpected = _unexpected()
    write(f"ci: {len(_skips)} skipped, {len(_skips) - len(unexpected)} on the allow-list "
          f"(tests/helpers/ci.py EXPECTED_SKIPS), {len(unexpected)} unexpected")  # fmt: skip
    for node, why in unexpected:
        write(f"ci: unexpected skip: {node}: {why}", red=in_ci())
    if in_ci() and unexpected:
        write("ci: CI=true fails on an unexpected skip: make it run, or add it with its "
              "reason to EXPECTED_SKIPS", red=True)  # fmt: skip
