"""Persistent cache of tuned choices: one JSON file per adapter.

- where: `<user cache dir of "webgpu-ar">/workgroups/<adapter hash>.json`
  (platformdirs), or a directory the caller gives (tests);
- key: the adapter (vendor, device, driver description, backend) picks the file,
  the kernel signature's key the entry;
- an entry: work group, work shape, median ms, method, candidates timed. An
  exhaustive entry answers descent requests too, not the other way round; an
  entry the current limits do not allow is a miss;
- versioned: a file of another VERSION, or one that is not valid JSON of the
  expected shape, is ignored with a warning naming it (and replaced on the next
  write); writes go to a temporary file renamed over the old one (atomic).
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import warnings
from dataclasses import asdict, dataclass
from pathlib import Path

from engine.gpu.workgroups.candidates import candidates
from engine.gpu.workgroups.limits import DeviceLimits
from engine.gpu.workgroups.spec import Candidate, Choice, KernelSignature, WorkShape
from engine.gpu.workgroups.tune import Tuned

VERSION = 1
APP_NAME = "webgpu-ar"


def default_dir() -> Path:
    """The user cache directory for tuned work groups."""
    import platformdirs

    return Path(platformdirs.user_cache_dir(APP_NAME)) / "workgroups"


@dataclass(frozen=True)
class AdapterKey:
    """What identifies an adapter and driver for tuning purposes."""

    vendor: str
    device: str
    driver: str
    backend: str

    @classmethod
    def from_info(cls, info: dict) -> AdapterKey:
        """From wgpu-py's `adapter.info` (the description carries the driver version)."""
        return cls(
            vendor=str(info.get("vendor", "")),
            device=str(info.get("device", "")),
            driver=str(info.get("description", "")),
            backend=str(info.get("backend_type", "")),
        )

    def file_name(self) -> str:
        text = json.dumps(asdict(self), sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:16] + ".json"


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
        self.path = Path(directory if directory is not None else default_dir())
        self.path = self.path / adapter.file_name()
        self._entries: dict[str, dict] | None = None

    def _load(self, warn: bool = True) -> dict[str, dict]:
        """The file's entries; {} (with a warning) when it is unreadable or foreign."""

        def ignore(why: str) -> dict[str, dict]:
            if warn:
                warnings.warn(f"ignoring work group cache {self.path}: {why}", stacklevel=4)
            return {}

        try:
            data = json.loads(self.path.read_text())
        except FileNotFoundError:
            return {}
        except OSError as exc:
            return ignore(f"unreadable ({exc})")
        except ValueError as exc:
            return ignore(f"corrupt ({exc})")
        if not isinstance(data, dict) or not isinstance(data.get("entries"), dict):
            return ignore("corrupt (no entries object)")
        if data.get("version") != VERSION:
            return ignore(f"version {data.get('version')!r}, this engine reads {VERSION}")
        return data["entries"]

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
        data = {"version": VERSION, "adapter": asdict(self.adapter), "entries": entries}
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self.path.parent, suffix=".tmp")
            try:
                with os.fdopen(fd, "w") as f:
                    json.dump(data, f, indent=1, sort_keys=True)
                os.replace(tmp, self.path)
            except BaseException:
                os.unlink(tmp)
                raise
        except OSError as exc:
            warnings.warn(f"cannot write work group cache {self.path}: {exc}", stacklevel=2)
