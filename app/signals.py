"""SIGINT / SIGTERM for ar-demo: stop cleanly at any point, finish the output, say so once.

- start-up (adapter, model compile, ...): the first signal raises `Interrupted` where the
  main thread is (never inside wgpu-py's own code, where a cffi callback would print and
  swallow it: there it is retried every 20 ms until the stack has left wgpu);
- the frame loop (`loop()`): the first signal only asks to stop; the frame in flight
  finishes and is written, then the loop ends (no frame is half-counted); a second signal
  raises `Interrupted` (a frame stuck on the GPU), never inside a `hold()` block (a frame
  read and counted, written and counted);
- shutdown (`shutdown()`): signals are noted and otherwise ignored, so a second Ctrl-C
  cannot cut the mp4 while its index is written or the stats are saved;
- window mode (`window()`): a signal stops the window's event loop;
- exit code 128 + signal number (130 SIGINT, 143 SIGTERM), as a shell reports it.
- usage: `stop = StopSignals.install()`; `with stop.loop(): while not stop.requested: ...`;
  `stop.shutdown()`; `sys.exit(stop.exit_code)`
"""

from __future__ import annotations

import contextlib
import signal
import sys
import threading
from pathlib import Path

HANDLED = ("SIGINT", "SIGTERM")
RETRY_S = 0.02  # how soon a signal that landed inside wgpu-py is raised again
_WGPU_DIR = None


class Interrupted(BaseException):
    """Raised by a signal (BaseException, like KeyboardInterrupt: `except Exception` in the
    pipeline does not catch it)."""

    def __init__(self, signum: int):
        self.signum = signum
        super().__init__(signal.Signals(signum).name)

    @property
    def name(self) -> str:
        return signal.Signals(self.signum).name

    @property
    def exit_code(self) -> int:
        return 128 + self.signum


def _inside_wgpu(frame) -> bool:
    """Is the interrupted code (or what called it) wgpu-py's? Its callbacks run under cffi,
    which prints an exception raised there and carries on."""
    global _WGPU_DIR
    if _WGPU_DIR is None:
        try:
            import wgpu

            _WGPU_DIR = str(Path(wgpu.__file__).parent)
        except ImportError:
            _WGPU_DIR = ""
    while frame is not None and _WGPU_DIR:
        if frame.f_code.co_filename.startswith(_WGPU_DIR):
            return True
        frame = frame.f_back
    return False


class StopSignals:
    """The process's SIGINT/SIGTERM handling (see the module docstring)."""

    def __init__(self):
        self.signum: int | None = None  # the first signal
        self.count = 0
        self.mode = "startup"  # startup | loop | window | shutdown
        self.stage = "starting"  # what start-up is doing (the interrupted line says it)
        self._pending = False  # a raise deferred out of wgpu-py's code or a hold()
        self._hold = 0
        self._previous: dict[int, object] = {}

    @classmethod
    def install(cls) -> StopSignals:
        """Handle SIGINT and SIGTERM (main thread only; elsewhere a no-op object)."""
        stop = cls()
        if threading.current_thread() is not threading.main_thread():
            return stop
        for name in HANDLED:
            num = getattr(signal, name)
            stop._previous[num] = signal.signal(num, stop._handle)
        return stop

    def restore(self) -> None:
        """Put back the handlers that were there before install()."""
        for num, handler in self._previous.items():
            signal.signal(num, handler)
        self._previous.clear()
        with contextlib.suppress(AttributeError, ValueError):
            signal.setitimer(signal.ITIMER_REAL, 0)

    # --- state --------------------------------------------------------------------------
    @property
    def requested(self) -> bool:
        return self.signum is not None

    @property
    def name(self) -> str | None:
        return signal.Signals(self.signum).name if self.signum is not None else None

    @property
    def exit_code(self) -> int | None:
        return 128 + self.signum if self.signum is not None else None

    @contextlib.contextmanager
    def loop(self):
        """The frame loop: a signal asks to stop (checked between frames)."""
        self.mode = "loop"
        try:
            yield self
        finally:
            self.mode = "startup" if self.mode == "loop" else self.mode

    @contextlib.contextmanager
    def hold(self):
        """A few statements a signal must not split (a frame read and counted, written and
        counted): a raise waits until the block is done."""
        self._hold += 1
        try:
            yield
        finally:
            self._hold -= 1
        if self._hold == 0:
            self.check()

    def window(self) -> None:
        """Window mode: a signal stops the window's event loop (window.py then prints its
        summary). rendercanvas puts its own SIGINT handler in while its loop runs (it stops
        the loop too, and logs "Received signal Interrupt"): that log record is taken as
        the signal and dropped, so the exit code and the one line are the same as here."""
        import logging

        self.mode = "window"
        log = logging.getLogger("rendercanvas")
        if not any(isinstance(f, _Received) for f in log.filters):
            log.addFilter(_Received(self))

    def shutdown(self) -> None:
        """From here on signals are only noted (the output is being finished)."""
        self.mode = "shutdown"
        self._pending = False
        with contextlib.suppress(AttributeError, ValueError):
            signal.setitimer(signal.ITIMER_REAL, 0)

    def ignore_until_exit(self) -> None:
        """SIG_IGN for the rest of the process: Python's finalisation puts SIG_DFL back in
        place of a Python handler (a late Ctrl-C would then kill it with -2), not of SIG_IGN."""
        self.shutdown()
        if self._previous:
            for num in self._previous:
                signal.signal(num, signal.SIG_IGN)

    def check(self) -> None:
        """Raise Interrupted now if a signal came in start-up mode and was deferred."""
        if self._pending and self.mode != "shutdown":
            self._pending = False
            raise Interrupted(self.signum)

    # --- the handlers ---------------------------------------------------------------------
    def _handle(self, signum: int, frame) -> None:
        self.count += 1
        if self.signum is None:
            self.signum = signum
        if self.mode == "shutdown":
            return
        if self.mode == "loop" and self.count == 1:
            return  # the loop sees `requested` after the frame in flight
        if self.mode == "window":
            from rendercanvas.glfw import loop

            loop.stop()
            return
        self._raise(frame)

    def _raise(self, frame) -> None:
        if (self._hold or _inside_wgpu(frame)) and hasattr(signal, "setitimer"):
            self._pending = True
            signal.signal(signal.SIGALRM, self._retry)
            signal.setitimer(signal.ITIMER_REAL, RETRY_S)
            return
        self._pending = False
        raise Interrupted(self.signum)

    def _retry(self, _signum: int, frame) -> None:
        if self._pending and self.mode != "shutdown":
            self._raise(frame)


class _Received:
    """A logging filter on rendercanvas: its "Received signal <name>" record is the signal."""

    def __init__(self, stop: StopSignals):
        self.stop = stop
        self.names = {signal.strsignal(getattr(signal, n)): getattr(signal, n) for n in HANDLED}

    def filter(self, record) -> bool:
        text = record.getMessage()
        if not text.startswith("Received signal "):
            return True
        num = self.names.get(text[len("Received signal ") :])
        if num is not None and self.stop.signum is None:
            self.stop.signum = num
        return num is None


def interrupted_line(name: str, where: str) -> str:
    """The one line on stderr."""
    return f"ar-demo: interrupted by {name} {where}"


def print_line(text: str) -> None:
    print(text, file=sys.stderr, flush=True)
