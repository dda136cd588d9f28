"""ar-demo in a subprocess that holds still at a frame until a signal comes, so a test can
signal it mid-run without racing the clip's end (a wait for "the output passed 20 KB" did:
under load the run could finish first, or the bytes were not yet flushed).

    proc = start_paused(args, frames=5)   # returns once frame 5 is about to be read
    proc.send_signal(signal.SIGINT)       # the run goes on from there and stops
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from tests.helpers.files import ROOT

READY = "ar-demo-test: paused before frame"
# The harness: ar-demo's own main(); the frame source's read() waits before frame N until
# the process has received a signal (recorded by a wrapper around StopSignals._handle, put
# in place before main() installs it). The wait is generous: it only ends a hung test.
HARNESS = textwrap.dedent("""
    import sys, time
    import app.signals, app.sources
    got = []
    handle = app.signals.StopSignals._handle
    def _handle(self, signum, frame):
        got.append(signum)
        return handle(self, signum, frame)
    app.signals.StopSignals._handle = _handle
    read = app.sources.FrameSource.read
    def _read(self):
        if self.frames_read == {frames} and not got:
            print("{ready} {frames}", flush=True)
            deadline = time.monotonic() + 600
            while not got and time.monotonic() < deadline:
                time.sleep(0.01)
        return read(self)
    app.sources.FrameSource.read = _read
    from app.cli import main
    sys.exit(main())
""")


def start_paused(args: list[str], frames: int = 5) -> subprocess.Popen:
    """`ar-demo ARGS` running and waiting before frame `frames` (frames 0..frames-1 are
    written); fails the test when it ends before getting there."""
    code = HARNESS.format(frames=frames, ready=READY)
    proc = subprocess.Popen([sys.executable, "-c", code, *args], cwd=ROOT,
                            env={**os.environ, "PYTHONPATH": str(ROOT)}, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)  # fmt: skip
    while line := proc.stdout.readline():
        if line.startswith(READY):
            return proc
    out, err = proc.communicate(timeout=60)
    pytest.fail(f"ar-demo ended (exit {proc.returncode}) before frame {frames}: {err[-2000:]}")
