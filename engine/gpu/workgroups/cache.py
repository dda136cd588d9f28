"""Persistent cache of tuned choices: one JSON file per adapter (engine/gpu/adapter_cache.py).

- where: `<cache root>/workgroups/<adapter hash>.json`, or a folder the caller gives;
- key: the adapter picks the file, the kernel signature's key the entry;
- an entry: work group, work shape, median ms, method, candidates timed. An
  exhaustive entry answers descent requests too, not the other way round; an
  entry the current limits do not allow is a miss;
- versioned and atomic as every adapter cache: a file of another VERSION, or one
  without an entries object, is ignored with a warning naming it.
"""

from __future__ import annotations

import warnings
from pathlib import Path

from engine.gpu.adapter_cache import AdapterFile, AdapterKey, cache_root
from engine.gpu.workgroups.candidates import candidates
from engine.gpu.workgroups.limits import DeviceLimits
from engine.gpu.workgroups.spec import Candidate, Choice, KernelSignature, WorkShape
from engine.gpu.workgroups.tune import Tuned

VERSION = 1
KIND = "workgroups"

__all__ = ["AdapterKey", "TuneCache", "default_dir"]


def default_dir() -> Path:
    """The folder of the tuned work group files."""
    return cache_root() / KIND


def _candidate(entry: dict) -> Candidate:
    """The entry's candidate; ValueError unless both triples are 3 ints."""
    wg, work = entry["workgroup"], entry["work"]
    for t in (wg, work):
        if not (isinstance(t, list) and len(t) == 3 and all(type(v) is int for v in t)):
            raise ValueError(f"{t!r} is not 3 integers")
    return Candidate((wg[0], wg[1], wg[2]), WorkShape(*work))


class TuneCache:
    """Tuned choices of one adapter, read once, written through."""

    def __init__(self, adapter: AdapterKey, directory: str | Path | None = None):
        self.adapter = adapter
        self.file = AdapterFile(KIND, adapter, VERSION, directory, required="entries")
        self.path = self.file.path
        self._entries: dict[str, dict] | None = None

    def _load(self, warn: bool = True) -> dict[str, dict]:
        """The file's entries; {} (with a warning) when it is unreadable or foreign."""
        return self.file.load(warn).get("entries", {})

    @property
    def entries(self) -> dict[str, dict]:
        if self._entries is None:
            self._entries = self._load()
        return self._entries

    def get(self, sig: KernelSignature, limits: DeviceLimits, method: str) -> Tuned | None:
        """The cached result for `sig` (source "cache", timed 0), or None."""
        entry = self.entries.get(sig.key())
        if entry is None or entry.get("method") not in ("exhaustive", method):
            return None
        try:
            c = _candidate(entry)
            ms = float(entry["ms"])
        except (KeyError, TypeError, ValueError) as exc:
            warnings.warn(f"ignoring bad entry {sig.key()!r} in {self.path}: {exc}", stacklevel=2)
            return None
        if c not in candidates(sig, limits):
            return None
        return Tuned(Choice.of(c, "cache"), ms, 0)

    def put(self, sig: KernelSignature, result: Tuned, method: str) -> None:
        """Record `result`, merged into the file as it is now (warns if it cannot write)."""
        entries = self._load(warn=False)  # others may have written since we read
        c = result.choice
        entries[sig.key()] = {
            "workgroup": list(c.workgroup),
            "work": list(c.work.as_tuple()),
            "ms": result.ms,
            "method": method,
            "timed": result.timed,
        }
        self._entries = entries
        self.file.save({"entries": entries})
