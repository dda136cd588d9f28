"""The harness every benchmark script shares: the stamp, the load gate, the report.

A report is the script's markdown printed under one stamp line, and its JSON document
written with the stamp under "stamp". The stamp says what ran where and how busy it was:
- command: how to run it again (`python -m MODULE ARGS`);
- date: when the Bench started (UTC, ISO 8601);
- commit: the checkout's HEAD, and `dirty` when tracked files differ from it;
- adapter: name, backend and class (engine.gpu.adapter_class) of the adapter the work
  ran on, when the script used one: `use(ctx)` in this process; a record its child
  processes sent back; or, for children that send none (ar-demo, fuzz workers),
  `probe_adapter()`: the one a fresh process here picks;
- machine: CPU, Python and library versions (engine/tools/bench/machine.py);
- load: the load gate's record (engine/tools/bench/load.py), taken when the Bench starts
  and again when it reports: around the measured work.

    bench = Bench(__spec__.name, argv)        # just before the measured work: load before
    ctx = bench.use(shared_context())         # the adapter, when the work runs on one
    rows = measure(...)
    bench.report(markdown(rows), {"rows": rows}, args.json)   # load after; print; JSON

    bench = Bench(__spec__.name, argv, adapter=probe_adapter())   # work in ar-demo processes

`module` is the script's `__spec__.name`: its dotted name under `python -m` too, where
`__name__` is "__main__". Timing and alternation are engine-bench's own, re-exported here
with its markdown table so that a script imports its harness from one place: `timed` and
`time_runs` (timing.py), `interleave` and `alternating` (ab.py), `table` (report.py).
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

from engine.tools.bench.ab import alternating, interleave
from engine.tools.bench.load import MAX_LOAD_PER_CPU, LoadGate
from engine.tools.bench.machine import machine_info
from engine.tools.bench.report import table
from engine.tools.bench.timing import time_runs, timed

__all__ = ["ROOT", "Bench", "adapter_record", "alternating", "command_line", "git_commit",
           "interleave", "probe_adapter", "table", "time_runs", "timed", "write_json"]  # fmt: skip

ROOT = Path(__file__).resolve().parents[1]  # the checkout the harnesses run from


def command_line(module: str, argv: list[str] | None = None) -> str:
    """`python -m MODULE ARGS`: `argv` as main() got it, else this process's arguments."""
    args = sys.argv[1:] if argv is None else argv
    return shlex.join(["python", "-m", module.removesuffix(".__main__"), *map(str, args)])


def git_commit(root: Path = ROOT) -> tuple[str | None, bool]:
    """(HEAD's commit, whether tracked files differ from it) of the checkout at `root`;
    (None, False) where git or the checkout is missing. Untracked files (results, models)
    do not make it dirty."""

    def git(*args: str) -> str:
        cmd = ["git", "-C", str(root), *args]
        return subprocess.run(cmd, capture_output=True, text=True, check=True).stdout.strip()

    try:
        return git("rev-parse", "HEAD"), bool(git("status", "--porcelain", "--untracked-files=no"))
    except (OSError, subprocess.CalledProcessError):
        return None, False


def adapter_record(ctx) -> dict:
    """The adapter of `ctx` (a GpuContext) as a stamp names it: device, backend, class."""
    from engine.gpu import adapter_class

    info = ctx.info
    return {"name": str(info.get("device", "?")), "backend": str(info.get("backend_type", "?")),
            "class": adapter_class(info)}  # fmt: skip


def probe_adapter(env: dict | None = None) -> dict | None:
    """The adapter_record of the adapter a fresh process of this checkout picks with `env`
    (ENGINE_ADAPTER, VK_ICD_FILENAMES; default this process's environment), for work that
    runs in children which do not say theirs; None where it finds none (the work says why).
    A process of its own: this one makes no device beside the children's."""
    code = ("import json; from benchmarks.common import adapter_record; "
            "from engine.gpu import shared_context; "
            "print(json.dumps(adapter_record(shared_context())))")  # fmt: skip
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True,
                       text=True, check=False)  # fmt: skip
    lines = r.stdout.strip().splitlines()
    return json.loads(lines[-1]) if r.returncode == 0 and lines else None


def write_json(path: str | Path, doc: dict) -> None:
    """`doc` as indented JSON at `path` (its folder made)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=1) + "\n")


class Bench:
    """One run of a benchmark script: its stamp, and the load gate around its work."""

    def __init__(self, module: str, argv: list[str] | None = None, adapter: dict | None = None,
                 max_load: float = MAX_LOAD_PER_CPU):  # fmt: skip
        """`adapter`: an adapter_record from elsewhere (a child, probe_adapter()), which
        may also be set later; `use(ctx)` records this process's."""
        self.command = command_line(module, argv)
        self.date = datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
        self.commit, self.dirty = git_commit()
        self.adapter = adapter
        self.gate = LoadGate.check(max_load)
        self._ctx = None
        self._stamp: dict | None = None

    def use(self, ctx):
        """Record the adapter the work runs on (`ctx`, a GpuContext); returns `ctx`."""
        self._ctx, self.adapter = ctx, adapter_record(ctx)
        return ctx

    def stamp(self) -> dict:
        """The stamp; the first call records the load after the work (later calls repeat it)."""
        if self._stamp is None:
            self.gate = self.gate.after()
            self._stamp = {"command": self.command, "date": self.date, "commit": self.commit,
                           "dirty": self.dirty, "adapter": self.adapter,
                           "machine": machine_info(self._ctx), "load": self.gate.as_dict()}  # fmt: skip
        return self._stamp

    def header(self) -> str:
        """The stamp as the one line a report's tables sit under."""
        s = self.stamp()
        commit = "unknown" if s["commit"] is None else s["commit"][:10]
        a = s["adapter"]
        adapter = f"{a['name']} ({a['backend']}, {a['class']})" if a else "none"
        return (f"command: `{s['command']}`; date: {s['date']}; commit: {commit}"
                f"{' (dirty)' if s['dirty'] else ''}; adapter: {adapter}; {self.gate.label()}")  # fmt: skip

    def document(self, doc: dict) -> dict:
        """The JSON document: the stamp, then `doc`'s own keys."""
        return {"stamp": self.stamp(), **doc}

    def markdown(self, text: str) -> str:
        """`text` (the script's markdown) under the stamp line."""
        return f"{self.header()}\n\n{text.rstrip()}"

    def report(self, text: str, doc: dict, json_path: str | Path | None = None) -> None:
        """Print `text` under the stamp line; write the document to `json_path` if given."""
        print(self.markdown(text))
        if json_path:
            write_json(json_path, self.document(doc))
