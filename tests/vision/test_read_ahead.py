"""engine/vision/read_ahead.py: items in order, errors raised in the consumer's thread in
order, clean stops, and stream() giving what process() gives."""

from __future__ import annotations

import threading

import pytest

from engine.vision.read_ahead import ReadAhead


def _frames(n: int, fail_at: int | None = None, seen: list | None = None):
    for i in range(n):
        if i == fail_at:
            raise OSError(f"cannot decode frame {i}")
        if seen is not None:
            seen.append((i, threading.get_ident()))
        yield i


def test_every_item_in_order_then_the_end():
    seen: list = []
    frames = ReadAhead(_frames(50, seen=seen), depth=3)
    assert list(frames) == list(range(50)) and frames.read() is None
    assert frames.delivered == 50
    assert {who for _, who in seen} == {frames._thread.ident}  # decoded on the worker
    frames.close()


def test_counts_only_what_the_consumer_took_and_stops_when_asked():
    seen: list = []
    frames = ReadAhead(_frames(100, seen=seen), depth=4)
    assert [frames.read() for _ in range(5)] == list(range(5))
    frames.close()  # the worker was blocked on its full queue: close() still returns
    assert frames.delivered == 5 and 5 <= len(seen) <= 5 + 4 + 1


def test_the_iterables_error_comes_after_the_items_before_it():
    frames = ReadAhead(_frames(10, fail_at=3), depth=8)
    assert [frames.read() for _ in range(3)] == [0, 1, 2]
    with pytest.raises(OSError, match="frame 3"):
        frames.read()
    assert frames.read() is None
    frames.close()
