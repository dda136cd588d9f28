"""The heuristic's choices kept on disk, so a new process does not rank candidates again.

The heuristic is a pure function of (signature, device limits, the rule code), so its
answer can be remembered without changing any choice:
- file: `<cache root>/heuristic/<hash>.json`, the hash over the DeviceLimits and the
  source of every module the choice depends on (rules, candidates, heuristic, spec): an
  edited rule gives a new file, never a stale answer;
- read once per process and limits; new choices are written at exit (and by `flush()`),
  merged with what other processes wrote meanwhile; an unreadable file is ignored;
- `preload()` adds choices shipped with a package (engine-latency's memo of the app's
  layer shapes, keyed by `code_hash()`), `entries()` lists what a process knows.
Saves the ranking (~100 ms of a face detection engine's cold init on lavapipe; the
measured split is in docs/benchmarks.md).
"""

from __future__ import annotations

import atexit
import hashlib
import json
import os
import tempfile
import threading
from dataclasses import asdict
from pathlib import Path

from engine.gpu.workgroups.limits import DeviceLimits
from engine.gpu.workgroups.spec import Candidate, Choice, KernelSignature, WorkShape

_CODE = ("rules.py", "candidates.py", "heuristic.py", "spec.py", "limits.py")
_lock = threading.Lock()
_tables: dict[DeviceLimits, dict[str, list]] = {}
_pending: set[DeviceLimits] = set()


def code_hash() -> str:
    """Hash of the code the heuristic's choices depend on (a shipped memo's key)."""
    here = Path(__file__).resolve().parent
    h = hashlib.sha256()
    for name in _CODE:
        h.update((here / name).read_bytes())
    return h.hexdigest()


def path_for(limits: DeviceLimits) -> Path:
    from engine.gpu.adapter_cache import cache_root

    key = json.dumps(asdict(limits), sort_keys=True) + code_hash()
    return cache_root() / "heuristic" / (hashlib.sha256(key.encode()).hexdigest()[:20] + ".json")


def _table(limits: DeviceLimits) -> dict[str, list]:
    if limits not in _tables:
        try:
            data = json.loads(path_for(limits).read_text())
            _tables[limits] = data if isinstance(data, dict) else {}
        except (OSError, ValueError):
            _tables[limits] = {}
    return _tables[limits]


def lookup(sig: KernelSignature, limits: DeviceLimits) -> Choice | None:
    """The remembered heuristic choice of `sig`, or None."""
    with _lock:
        entry = _table(limits).get(sig.key())
    try:
        wg, work = entry
        return Choice.of(Candidate(tuple(wg), WorkShape(*work)), "heuristic")
    except (TypeError, ValueError):
        return None


def remember(sig: KernelSignature, limits: DeviceLimits, choice: Choice) -> None:
    with _lock:
        _table(limits)[sig.key()] = [list(choice.workgroup), list(choice.work.as_tuple())]
        _pending.add(limits)


def preload(limits: DeviceLimits, choices: dict[str, list]) -> None:
    """Add known choices ({signature key: [workgroup, work]}) under those already known,
    in memory only: made by the same `code_hash()`, they are the choices ranking gives."""
    with _lock:
        table = _table(limits)
        for key, value in choices.items():
            table.setdefault(key, value)


def entries(limits: DeviceLimits) -> dict[str, list]:
    """Every choice this process knows for `limits` (read from disk, ranked, preloaded)."""
    with _lock:
        return dict(_table(limits))


def flush() -> None:
    """Write the new choices (merged with the files as they are now)."""
    with _lock:
        pending = list(_pending)
        _pending.clear()
        for limits in pending:
            if limits not in _tables:
                continue
            path = path_for(limits)
            try:
                on_disk = json.loads(path.read_text())
            except (OSError, ValueError):
                on_disk = {}
            merged = {**(on_disk if isinstance(on_disk, dict) else {}), **_tables[limits]}
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
                with os.fdopen(fd, "w") as f:
                    json.dump(merged, f, sort_keys=True)
                os.replace(tmp, path)
            except OSError:
                pass  # a read-only cache: rank again next time


atexit.register(flush)
