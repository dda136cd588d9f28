"""A build on a worker thread: what the staged start (engine/gpu/staged.py) and ar-demo's
background switches (app/build.py) both run.

- input: `build()`, a function of no arguments; a thread name
- output: `result` (what build() returned) or `error` (the exception it raised, handed to
  the owner's thread), `done`, `wait(timeout)`, `seconds` (how long it ran, once done)
- `cancelled`: set by the owner that gave up on it; a build that finishes after reads it
  (`on_cancelled(result)` is called with what it built, to release it)
- usage: `b = BackgroundBuild(lambda: compile_it(), "optimized kernels"); ...; if b.done:
  use(b.result)`

Why a thread helps: wgpu-py releases the GIL in its native calls, so pipeline creation and
the warm-up's waits leave the owner's thread free.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable


class BackgroundBuild:
    """`build()` on a daemon worker thread (see the module docstring)."""

    def __init__(self, build: Callable[[], object], name: str,
                 on_cancelled: Callable[[object], None] | None = None):  # fmt: skip
        self.result = None
        self.error: BaseException | None = None
        self.cancelled = False
        self.t_start = time.perf_counter()
        self.seconds: float | None = None
        self._on_cancelled = on_cancelled
        self._thread = threading.Thread(target=self._run, args=(build,), daemon=True, name=name)
        self._thread.start()

    def _run(self, build) -> None:
        try:
            self.result = build()
        except BaseException as exc:  # handed to the owner's thread
            self.error = exc
        self.seconds = time.perf_counter() - self.t_start
        if self.cancelled and self.result is not None and self._on_cancelled is not None:
            self._on_cancelled(self.result)

    @property
    def done(self) -> bool:
        return not self._thread.is_alive()

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the build ends (at most `timeout` s); whether it ended."""
        self._thread.join(timeout)
        return self.done
