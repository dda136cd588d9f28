"""Run mutants in worker processes and classify every one.

- the mutants are split into batches; `jobs` workers (threads here, each driving one child
  process at a time: benchmarks/fuzz/child.py) take batches from a queue;
- a child runs its batch mutant after mutant (imports and the device are paid once per
  batch) and says when each starts and how it ended;
- the parent watches each mutant: longer than `timeout` s -> "hang", resident memory above
  `rss_limit` -> "memory" (both: the child is killed), the child dying mid-mutant ->
  "crash" (with the signal); the rest of the batch goes on in a fresh child;
- a ModelError whose message is not one line naming the mutant's file counts in
  `bad_messages` (the engine's messages name file, op or tensor and what is wrong).
"""

from __future__ import annotations

import json
import os
import queue
import selectors
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path

from benchmarks.common import ROOT
from benchmarks.fuzz.mutate import mutant

# Outcomes; the last four fail a fuzz run.
OUTCOMES = ("runs", "model_error", "escape", "crash", "hang", "memory")
FAILURES = ("escape", "crash", "hang", "memory")
RSS_LIMIT = 4 << 30  # the target: no mutant may take more than 4 GiB resident
STARTUP_TIMEOUT = 180.0  # imports + device creation on a loaded 2-core machine: 5-20 s seen


@dataclass
class Result:
    name: str
    index: int
    outcome: str
    stage: str = ""
    error: str = ""
    where: str = ""
    message: str = ""
    kinds: list[str] = field(default_factory=list)
    detail: str = ""
    seconds: float = 0.0
    path: str = ""

    @property
    def message_ok(self) -> bool:
        """A ModelError message is one line and names the file it is about."""
        return self.outcome != "model_error" or (
            "\n" not in self.message.strip() and Path(self.path).name in self.message
        )


def _rss(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


class _Child:
    """One worker process over a list of (model, index) items."""

    def __init__(self, job: dict, env: dict, log):
        # cwd: this checkout, so the workers import the engine this process runs
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "benchmarks.fuzz.child"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log, env=env,
            cwd=ROOT, start_new_session=True,
        )  # fmt: skip
        self.proc.stdin.write(json.dumps(job).encode())
        self.proc.stdin.close()
        self.sel = selectors.DefaultSelector()
        self.sel.register(self.proc.stdout, selectors.EVENT_READ)
        self.pending = b""

    def lines(self, wait: float) -> list[dict] | None:
        """Protocol lines that arrived within `wait` s; None at end of stream."""
        out = []
        if self.sel.select(wait):
            chunk = os.read(self.proc.stdout.fileno(), 1 << 16)
            if not chunk:
                return None
            self.pending += chunk
            *whole, self.pending = self.pending.split(b"\n")
            out = [json.loads(x) for x in whole if x.strip()]
        return out

    def kill(self) -> int:
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        return self.wait()

    def wait(self) -> int:
        code = self.proc.wait()
        self.sel.close()
        self.proc.stdout.close()
        return code


def _run_batch(items, base_job, env, timeout, rss_limit, log) -> list[Result]:
    """Every item's Result; a fresh child continues after one that crashed or was killed."""
    results: list[Result] = []
    todo = list(items)
    while todo:
        child = _Child({**base_job, "items": todo}, env, log)
        try:
            failure = _watch(child, results, timeout, rss_limit)
        finally:
            if child.proc.poll() is None:  # interrupted: leave no worker behind
                child.kill()
        done = {(r.name, r.index) for r in results}
        if failure is not None:
            results.append(failure)
            done.add((failure.name, failure.index))
        left = [it for it in todo if tuple(it) not in done]
        if len(left) == len(todo):
            raise RuntimeError("fuzz worker ended between mutants without a result; see the log")
        todo = left
    return results


def _watch(child: _Child, results: list[Result], timeout: float, rss_limit: int) -> Result | None:
    """Collect a child's results until it ends; the Result of the mutant that crashed, hung
    or blew the memory limit, if one did (the child is then killed)."""
    current, started, ready = None, time.monotonic(), False
    while True:
        lines = child.lines(0.2)
        if lines is None:  # the child ended
            code = child.wait()
            if current is not None:
                sig = -code if code < 0 else 0
                what = f"signal {signal.Signals(sig).name}" if sig else f"exit {code}"
                return Result(*current, "crash", error=what)
            if not ready:
                raise RuntimeError(f"fuzz worker failed to start (exit {code}); see the log")
            return None
        for msg in lines:
            if msg.get("ready"):
                ready = True
            elif "start" in msg:
                current, started = tuple(msg["start"]), time.monotonic()
            else:
                results.append(Result(**msg))
                current = None
        limit = timeout if ready else STARTUP_TIMEOUT
        if time.monotonic() - started > limit and (current is not None or not ready):
            child.kill()
            if current is None:
                raise RuntimeError(f"fuzz worker did not start in {STARTUP_TIMEOUT:.0f} s")
            return Result(*current, "hang", error=f"over {timeout:.0f} s")
        rss = _rss(child.proc.pid)
        if current is not None and rss > rss_limit:
            child.kill()
            return Result(*current, "memory", error=f"RSS {rss / 2**30:.1f} GiB")


def run_fuzz(
    models: dict[str, Path],
    count: int,
    *,
    seed: int = 0,
    start: int = 0,
    jobs: int = 2,
    batch: int = 50,
    timeout: float = 60.0,
    rss_limit: int = RSS_LIMIT,
    log_path: Path | None = None,
) -> list[Result]:
    """`count` mutants of each model (indices start..start+count-1), classified."""
    items = [[name, i] for i in range(start, start + count) for name in models]
    batches: queue.Queue = queue.Queue()
    for k in range(0, len(items), batch):
        batches.put(items[k : k + batch])
    results: list[Result] = []
    errors: list[BaseException] = []
    lock = threading.Lock()
    with tempfile.TemporaryDirectory(prefix="fuzz-") as tmp:
        env = {**os.environ, "ENGINE_CACHE_DIR": str(Path(tmp) / "cache")}
        base = {"seed": seed, "models": {n: str(p) for n, p in models.items()}, "workdir": tmp}
        log = open(log_path or os.devnull, "ab")

        def worker() -> None:
            while not errors:
                try:
                    chunk = batches.get_nowait()
                except queue.Empty:
                    return
                try:
                    out = _run_batch(chunk, base, env, timeout, rss_limit, log)
                except BaseException as exc:  # noqa: BLE001 - reported by the caller
                    errors.append(exc)
                    return
                with lock:
                    results.extend(out)

        threads = [threading.Thread(target=worker) for _ in range(max(1, jobs))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        log.close()
    if errors:
        raise errors[0]
    for r in results:  # a crashed, hung or killed mutant: say what it was
        if not r.kinds:
            m = mutant(models[r.name].read_bytes(), r.name, seed, r.index)
            r.kinds, r.detail = list(m.kinds), m.detail
    return sorted(results, key=lambda r: (r.name, r.index))


def summary(results: list[Result]) -> dict:
    """Counts by outcome, ModelErrors by stage, failures listed."""
    outcomes = Counter(r.outcome for r in results)
    stages = Counter(r.stage for r in results if r.outcome == "model_error")
    return {
        "mutants": len(results),
        "outcomes": {k: outcomes.get(k, 0) for k in OUTCOMES},
        "model_error_stages": dict(sorted(stages.items())),
        "kinds": dict(sorted(Counter(k for r in results for k in r.kinds).items())),
        "bad_messages": [asdict(r) for r in results if not r.message_ok],
        "failures": [asdict(r) for r in results if r.outcome in FAILURES],
    }
