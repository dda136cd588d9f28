"""app/frame_workers.py: frames in order, errors raised in the loop's thread, clean stops."""

from __future__ import annotations

import threading
import time

import pytest

from app.frame_workers import ReadAhead, WriteBehind


class _Source:
    def __init__(self, n: int, fail_at: int | None = None):
        self.n, self.fail_at, self.frames_read = n, fail_at, 0

    def read(self):
        if self.frames_read == self.fail_at:
            raise OSError(f"cannot decode frame {self.frames_read}")
        if self.frames_read >= self.n:
            return None
        self.frames_read += 1
        return self.frames_read - 1


def test_read_ahead_gives_every_frame_in_order_then_none():
    frames = ReadAhead(_Source(50), depth=3)
    got = [frames.read() for _ in range(50)]
    assert got == list(range(50)) and frames.read() is None and frames.read() is None
    assert frames.delivered == 50
    frames.close()


def test_read_ahead_counts_only_what_the_loop_took():
    source = _Source(100)
    frames = ReadAhead(source, depth=4)
    assert [frames.read() for _ in range(5)] == list(range(5))
    frames.close()  # the worker was blocked on its full queue: close() still returns
    assert frames.delivered == 5 and 5 <= source.frames_read <= 5 + 4 + 1


def test_read_ahead_raises_the_decoders_error_in_order():
    frames = ReadAhead(_Source(10, fail_at=3), depth=8)
    assert [frames.read() for _ in range(3)] == [0, 1, 2]
    with pytest.raises(OSError, match="frame 3"):
        frames.read()
    assert frames.read() is None
    frames.close()


def test_write_behind_writes_in_order_and_close_waits_for_all():
    written, main = [], threading.get_ident()

    def write(item):
        assert threading.get_ident() != main
        time.sleep(0.001 * (item % 3))  # uneven work: order must not depend on it
        written.append(item)

    behind = WriteBehind(write, depth=2)
    for i in range(40):
        behind.put(i)
    behind.close()
    assert written == list(range(40))


def test_write_behind_raises_the_writers_error_and_writes_nothing_after_it():
    written = []

    def write(item):
        if item == 2:
            raise ValueError("disk full")
        written.append(item)

    behind = WriteBehind(write, depth=1)
    with pytest.raises(ValueError, match="disk full"):
        for i in range(10):
            behind.put(i)
        behind.close()
    behind.close()  # the error was raised once; the worker stops
    assert written == [0, 1]
