"""Decode ahead and encode behind on worker threads, so headless mode's GPU work overlaps them.

- `ReadAhead(source, depth)`: the source's frames decoded on a worker thread, up to `depth`
  ahead of the loop; `read()` gives them in order (None at the end) and `delivered` counts
  the frames the loop took: that, not what the worker decoded ahead, is what a run read;
- `WriteBehind(write, depth)`: `put(item)` queues an item for `write(item)` on a worker
  thread, in order; `close()` waits until every queued item is written.
- why threads: PyAV's decoder and OpenCV's encoder run in C with the GIL released, so on a
  CPU adapter (lavapipe, xnnpack) the frame i+1 decode, the frame i encode and the models
  share the cores instead of taking turns; on a GPU the GPU waits less for Python.
- errors: an exception on a worker is raised again in the loop's thread at its next
  `read()` / `put()` / `close()`; results and the output video are the same as when the
  loop reads and writes itself (tests/app/test_headless.py compares them frame by frame).
"""

from __future__ import annotations

import queue
import threading

_POLL_S = 0.05  # how often a blocked worker looks whether it was asked to stop
_END = object()


class _Failed:
    def __init__(self, exc: BaseException):
        self.exc = exc


class ReadAhead:
    """`source.read()` on a worker thread, `depth` frames ahead (module docstring)."""

    def __init__(self, source, depth: int = 4):
        self.source = source
        self.delivered = 0
        self._queue: queue.Queue = queue.Queue(maxsize=depth)
        self._stop = threading.Event()
        self._done = False
        self._thread = threading.Thread(target=self._work, name="frame-reader", daemon=True)
        self._thread.start()

    def _work(self) -> None:
        try:
            while not self._stop.is_set():
                frame = self.source.read()
                if not self._put(frame) or frame is None:
                    return
        except BaseException as exc:  # raised again in the loop's thread by read()
            self._put(_Failed(exc))

    def _put(self, item) -> bool:
        while not self._stop.is_set():
            try:
                self._queue.put(item, timeout=_POLL_S)
                return True
            except queue.Full:
                continue
        return False

    def read(self):
        """The next frame, or None at the end of the source."""
        if self._done:
            return None
        item = self._queue.get()
        if isinstance(item, _Failed):
            self._done = True
            raise item.exc
        if item is None:
            self._done = True
            return None
        self.delivered += 1
        return item

    def close(self) -> None:
        """Stop the worker (frames decoded ahead and not taken are dropped); the source
        may be closed after this returns."""
        self._stop.set()
        self._thread.join()


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
