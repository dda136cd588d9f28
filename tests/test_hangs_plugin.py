"""A hung test under xdist (tests/helpers/hangs.py): its stacks reach the run's output, the
processes it started are killed, the test is reported as failed."""

from __future__ import annotations

import os
import subprocess
import sys
import time

from tests.helpers.files import ROOT
from tests.helpers.hangs import descendants, proc_stat

SAMPLE = """
import os, subprocess

def test_hangs_in_a_child():
    child = subprocess.Popen(["sleep", "300"])
    with open(os.environ["CHILD_PID_FILE"], "w") as f:
        f.write(str(child.pid))
    child.wait()  # the hang

def test_after_it():
    pass
"""


def test_a_hung_test_dumps_its_stacks_and_kills_its_child(tmp_path):
    (tmp_path / "test_sample.py").write_text(SAMPLE)
    (tmp_path / "pytest.ini").write_text("[pytest]\ntimeout = 5\ntimeout_method = thread\n")
    pid_file = tmp_path / "child.pid"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "CHILD_PID_FILE": str(pid_file)}
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "tests.helpers.hangs", "-p", "no:cacheprovider",
         "-n", "1", "--basetemp", str(tmp_path / "t"), "test_sample.py"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out
    assert "test_sample.py::test_hangs_in_a_child still running after 5 s" in out, out
    assert "in test_hangs_in_a_child" in out, out  # the hung test's frame in the stacks
    assert "killed 1 processes it started" in out, out
    # reported as a failure; whether xdist then runs the worker's other tests on a new
    # worker depends on whether it had told the worker to stop (a race: seen both ways)
    assert "1 failed" in out and "worker 'gw0' crashed while running" in out, out
    pid = int(pid_file.read_text())
    time.sleep(0.2)  # SIGKILL is asynchronous; a killed child is a zombie until reaped
    fields = proc_stat(pid)
    state = fields[0] if fields else None
    assert state in (None, "Z"), f"the hung test's child {pid} lives on ({state})"


def test_descendants_follow_grandchildren():
    child = subprocess.Popen(["bash", "-c", "sleep 60 & wait"])
    try:
        deadline = time.monotonic() + 10
        while len(descendants(os.getpid())) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        below = descendants(os.getpid())
        assert child.pid in below and len(below) >= 2, below
    finally:
        for pid in descendants(child.pid):
            os.kill(pid, 9)
        child.kill()
        child.wait()
