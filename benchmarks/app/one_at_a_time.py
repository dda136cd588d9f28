"""ar-demo with its frames not overlapped: the loop reads, renders, waits, reads back and
encodes one frame at a time (what headless mode did before it decoded ahead, kept two frames
on the GPU and encoded behind: app/headless.py).

The baseline of benchmarks/app/overlap_bench.py and the oracle of tests/app/test_headless.py
(the overlapped file must equal this one byte for byte).

    python -m benchmarks.app.one_at_a_time ARGS...   # ar-demo ARGS, one frame at a time
"""

from __future__ import annotations

import sys


class ReadInline:
    """engine/vision/read_ahead.ReadAhead without its thread: items taken when asked for."""

    def __init__(self, frames, depth: int = 0):
        self.frames, self.delivered = iter(frames), 0

    def read(self):
        frame = next(self.frames, None)
        self.delivered += frame is not None
        return frame

    def close(self) -> None:
        pass


class WriteInline:
    """app/frame_workers.WriteBehind without its thread: each item written when handed over."""

    def __init__(self, write):
        self.write = write

    def put(self, item) -> None:
        self.write(item)

    def close(self) -> None:
        pass


def one_at_a_time(setattr=setattr) -> None:
    """Turn the overlap off in app.headless (`setattr`: a test's monkeypatch.setattr)."""
    import app.headless

    setattr(app.headless, "ReadAhead", ReadInline)
    setattr(app.headless, "WriteBehind", WriteInline)
    setattr(app.headless, "IN_FLIGHT", 1)


if __name__ == "__main__":
    from app.cli import main

    one_at_a_time()
    sys.exit(main(sys.argv[1:]))
