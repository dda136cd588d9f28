"""app/frame_workers.py: frames written in order on a worker, errors raised in the loop's
thread."""

from __future__ import annotations

import threading
import time

import pytest

from app.frame_workers import WriteBehind


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
