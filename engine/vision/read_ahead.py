"""Frames taken from an iterable on a worker thread, a few ahead of the consumer.

- `ReadAhead(frames, depth)`: iterates `frames` (a generator that decodes a video, a list,
  `iter(source.read, None)`) on a worker thread, up to `depth` items ahead; iterating the
  ReadAhead gives them in order; `delivered` counts the items the consumer took (what was
  decoded ahead of a stop is not counted); `close()` stops the worker;
- why: decoders (PyAV, OpenCV) run in C with the GIL released, so the decode of frame i+1
  overlaps the models on frame i instead of taking turns with them (engine.vision's
  `stream()`, ar-demo's headless mode);
- errors: an exception of the iterable is raised in the consumer's thread, in order, after
  the items before it.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterable

_POLL_S = 0.05  # how often a blocked worker looks whether it was asked to stop
_END = object()


class _Failed:
    def __init__(self, exc: BaseException):
        self.exc = exc


class ReadAhead:
    """`frames` iterated on a worker thread, `depth` items ahead (module docstring)."""

    def __init__(self, frames: Iterable, depth: int = 4):
        self.delivered = 0
        self._queue: queue.Queue = queue.Queue(maxsize=max(1, depth))
        self._stop = threading.Event()
        self._done = False
        self._thread = threading.Thread(target=self._work, args=(iter(frames),),
                                        name="read-ahead", daemon=True)  # fmt: skip
        self._thread.start()

    def _work(self, frames) -> None:
        try:
            for item in frames:
                if not self._put(item):
                    return
            self._put(_END)
        except BaseException as exc:  # raised again in the consumer's thread
            self._put(_Failed(exc))

    def _put(self, item) -> bool:
        while not self._stop.is_set():
            try:
                self._queue.put(item, timeout=_POLL_S)
                return True
            except queue.Full:
                continue
        return False

    def __iter__(self):
        return self

    def __next__(self):
        if self._done:
            raise StopIteration
        item = self._queue.get()
        if item is _END or isinstance(item, _Failed):
            self._done = True
            if item is _END:
                raise StopIteration
            raise item.exc
        self.delivered += 1
        return item

    def read(self):
        """The next item, or None at the end."""
        return next(self, None)

    def close(self) -> None:
        """Stop the worker (items read ahead and not taken are dropped)."""
        self._stop.set()
        self._thread.join()
