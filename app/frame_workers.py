"""Encode behind on a worker thread, so headless mode's GPU work overlaps it.

- `WriteBehind(write, depth)`: `put(item)` queues an item for `write(item)` on a worker
  thread, in order; `close()` waits until every queued item is written; an exception of
  `write` is raised in the loop's thread at its next `put()` / `close()`, and nothing after
  it is written;
- why a thread: OpenCV's encoder runs in C with the GIL released, so the encode of frame i
  overlaps the models and the GPU work of frame i+1 (the decode side: engine/vision/
  read_ahead.py); the output is the file the loop writes itself, byte for byte
  (tests/app/test_headless.py).
"""

from __future__ import annotations

import queue
import threading

_END = object()


class WriteBehind:
    """`write(item)` for each `put(item)`, in order, on a worker thread (module docstring)."""

    def __init__(self, write, depth: int = 4):
        self._write = write
        self._queue: queue.Queue = queue.Queue(maxsize=depth)
        self._error: BaseException | None = None  # raised once in the loop's thread
        self._failed = False  # stays set: nothing is written after a failure
        self._thread = threading.Thread(target=self._work, name="frame-writer", daemon=True)
        self._thread.start()

    def _work(self) -> None:
        while (item := self._queue.get()) is not _END:
            if self._failed:
                continue  # after a failure: drain, write nothing out of order
            try:
                self._write(item)
            except BaseException as exc:  # raised again in the loop's thread
                self._error, self._failed = exc, True

    def _raise(self) -> None:
        if self._error is not None:
            exc, self._error = self._error, None
            raise exc

    def put(self, item) -> None:
        self._raise()
        self._queue.put(item)

    def close(self) -> None:
        """Write everything queued, stop the worker, raise its error if it had one."""
        if self._thread.is_alive():
            self._queue.put(_END)
            self._thread.join()
        self._raise()
