"""engine-extract's progress on stderr: an overall bar (videos), a bar per file being
processed (frames), one line per skipped or failed file, a summary at the end.

- the same for both runners: this process calls `frames()` directly, the Ray runner
  forwards what its tasks report (engine/tools/extract/cluster.py)
- `enabled=False` (--no-progress): no bars; the lines and the summary stay
- usage: `p = Progress(n); p.frames(video, 10, 300); p.finish(outcome); p.summary()`
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from tqdm import tqdm

from engine.tools.extract.job import Outcome


class Progress:
    def __init__(self, videos: int, enabled: bool = True):
        self.enabled, self.t0 = enabled, time.perf_counter()
        self.overall = tqdm(total=videos, desc="videos", unit="video", file=sys.stderr,
                            position=0, disable=not enabled, dynamic_ncols=True)  # fmt: skip
        self.bars: dict[str, tqdm] = {}
        self.finished: set[str] = set()
        self.counts = {"done": 0, "skipped": 0, "failed": 0}
        self.frame_count = 0

    def frames(self, video: str, done: int, total: int | None) -> None:
        """`done` of `total` frames of `video` processed."""
        if video in self.finished or not self.enabled:
            return  # a late report from a Ray task
        bar = self.bars.get(video)
        if bar is None:
            used = {b.slot for b in self.bars.values()}  # rows under the overall bar
            slot = next(i for i in range(1, len(used) + 2) if i not in used)
            bar = self.bars[video] = tqdm(total=total, desc=Path(video).name, unit="frame",
                                          file=sys.stderr, position=slot, leave=False,
                                          dynamic_ncols=True)  # fmt: skip
            bar.slot = slot
        bar.total = total
        bar.update(done - bar.n)

    def line(self, text: str) -> None:
        tqdm.write(f"engine-extract: {text}", file=sys.stderr)

    def failed(self, video: str, message: str) -> None:
        """A file that was not processed, before or after its job ran."""
        self.finish(Outcome(video, "failed", message))

    def finish(self, outcome: Outcome) -> None:
        self.finished.add(outcome.video)
        bar = self.bars.pop(outcome.video, None)
        if bar is not None:
            bar.close()
        self.counts[outcome.status] += 1
        self.frame_count += outcome.frames
        if outcome.status != "done":
            msg = outcome.message
            where = msg if msg.startswith(f"{outcome.video}:") else f"{outcome.video}: {msg}"
            self.line(f"{outcome.status} {where}")
        self.overall.update(1)

    def summary(self) -> str:
        self.overall.close()
        s, c = time.perf_counter() - self.t0, self.counts
        text = (f"{c['done']} done ({self.frame_count} frames), {c['skipped']} skipped, "
                f"{c['failed']} failed in {s:.1f} s ({c['done'] / s:.2f} videos/s)")  # fmt: skip
        self.line(text)
        return text
