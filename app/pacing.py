"""Real-time playback of a video file: frames come when due, late ones are dropped.

- input: a FrameSource with a frame rate (a video file), optionally a frame read ahead
  (the start-up screen's frame 0)
- output: `read()` -> the frame due now (or None at the end); `dropped` counts the frames
  skipped
- rule: the first frame read starts the clock (t0); frame i is due at t0 + i / fps. At
  each read the newest frame whose time has come is returned: older ones are read and
  dropped (never slow motion); a frame not yet due is waited for (never fast forward).
  Its capture time is its due time, so latency includes how late it was shown, as a
  camera frame's would.
- usage: `pacer = Pacer(source); frame = pacer.read()`
"""

from __future__ import annotations

import time

from app.sources import Frame


class Pacer:
    def __init__(self, source, held: Frame | None = None, clock=time.perf_counter,
                 sleep=time.sleep):  # fmt: skip
        self.source, self.held = source, held
        self.fps = float(source.fps) if source.fps and source.fps > 0 else 30.0
        self.clock, self.sleep = clock, sleep
        self.t0: float | None = None
        self.dropped = 0

    def _next(self) -> Frame | None:
        frame, self.held = self.held, None
        return frame if frame is not None else self.source.read()

    def read(self) -> Frame | None:
        now = self.clock()
        frame = self._next()
        if frame is None:
            return None
        if self.t0 is None:
            self.t0 = now - frame.index / self.fps  # this frame is due now
        due = int((now - self.t0) * self.fps + 1e-6)  # the newest frame whose time has come
        while frame.index < due:
            nxt = self.source.read()
            if nxt is None:  # the end: show the last frame rather than nothing
                break
            self.dropped += 1
            frame = nxt
        t_due = self.t0 + frame.index / self.fps
        wait = t_due - self.clock()
        if wait > 0:
            self.sleep(wait)
        frame.t_capture = t_due
        return frame
