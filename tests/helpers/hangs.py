"""A test that overruns its time limit says where it hung, and takes its processes with it.

pytest-timeout (limits in pyproject.toml) ends a hung test with os._exit of the process
that runs it. Under xdist that process is a worker whose terminal is not the run's output:
its stack dump went nowhere (CI printed only "[gw1] node down: Not properly terminated"),
and the processes the test had started (Xvfb, ar-demo, a benchmark's child) lived on.
This plugin takes over pytest-timeout's timer for the "thread" method, with the same
limits: at the limit it writes the test's id and every thread's stack to the run's stderr,
kills the processes the worker started (and theirs), then ends the worker as pytest-timeout
does. The test is reported as failed ("worker crashed") and the run goes on.
"""

from __future__ import annotations

import faulthandler
import os
import signal
import sys
import threading
from pathlib import Path

import pytest


@pytest.hookimpl(tryfirst=True)
def pytest_timeout_set_timer(item, settings):
    if settings.method != "thread":
        return None  # pytest-timeout's own signal timer
    timer = threading.Timer(settings.timeout, _end_hung_test, (item, settings.timeout))
    timer.name = f"time limit of {item.nodeid}"
    timer.daemon = True

    def cancel():  # pytest-timeout's pytest_timeout_cancel_timer calls it
        timer.cancel()
        timer.join()

    item.cancel_timeout = cancel
    timer.start()
    return True


def _end_hung_test(item, timeout: float) -> None:
    try:
        capman = item.config.pluginmanager.getplugin("capturemanager")
        if capman is not None:
            capman.suspend_global_capture(item)  # stderr is the run's output again
        err = sys.__stderr__
        err.write(f"\n+++ {item.nodeid} still running after {timeout:g} s: every thread's "
                  f"stack (most recent call first), then this process ends\n")  # fmt: skip
        err.flush()
        faulthandler.dump_traceback(file=err, all_threads=True)
        killed = kill_descendants(os.getpid())
        err.write(f"+++ killed {len(killed)} processes it started: {killed}\n")
        err.flush()
    finally:
        os._exit(1)


def proc_stat(pid: int) -> list[str] | None:
    """/proc/PID/stat after the command name (state, ppid, ...); None once it is gone."""
    try:
        # "pid (comm) state ppid ...": comm may hold spaces and parentheses
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None


def descendants(pid: int) -> list[int]:
    """The processes below `pid` (children first), from /proc's parent links."""
    parent = {}
    for entry in Path("/proc").glob("[0-9]*"):
        fields = proc_stat(int(entry.name))
        if fields is not None:
            parent[int(entry.name)] = int(fields[1])
    found, frontier = [], {pid}
    while frontier:
        kids = [p for p, pp in parent.items() if pp in frontier]
        found += kids
        frontier = set(kids)
    return found


def kill_descendants(pid: int) -> list[int]:
    killed = []
    for child in descendants(pid):
        try:
            os.kill(child, signal.SIGKILL)
            killed.append(child)
        except ProcessLookupError:
            pass
    return killed
