"""The latency dataset: one gzipped CSV per adapter, one row per measured model.

Path: data/latency/<adapter>.csv.gz (e.g. data/latency/lavapipe.csv.gz), beside it
<adapter>.adapter.json (the AdapterProfile the rows were measured with). Rows are
appended in batches, each batch a complete gzip member, so an interrupted run loses
at most one batch and a restart skips what is there (key: hash, config, precision).
JSON-valued columns (ops, adjacency, config, dispatch_list, dispatch_ms) hold compact
JSON; empty strings stand for "not measured".
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import os
from pathlib import Path

from engine.errors import EngineError

COLUMNS = (
    "hash", "sample", "model", "vertices", "edges", "ops", "adjacency", "config",
    "flops", "params", "peak_memory", "dispatches", "dispatch_list",
    "engine_mean_ms", "engine_median_ms", "engine_std_ms", "engine_runs", "engine_restarts", "dispatch_ms",
    "litert_mean_ms", "litert_median_ms", "litert_std_ms", "litert_runs", "litert_restarts", "litert_threads",
    "adapter", "device", "driver", "precision", "storage", "engine_commit", "load_avg",
    "measured_at", "engine_min_ms", "engine_p10_ms",
)  # fmt: skip
JSON_COLUMNS = ("ops", "adjacency", "config", "dispatch_list", "dispatch_ms")
INT_COLUMNS = ("vertices", "edges", "flops", "params", "peak_memory", "dispatches",
               "engine_runs", "engine_restarts", "litert_runs", "litert_restarts",
               "litert_threads")  # fmt: skip
FLOAT_COLUMNS = ("engine_mean_ms", "engine_median_ms", "engine_std_ms", "engine_min_ms",
                 "engine_p10_ms", "litert_mean_ms",
                 "litert_median_ms", "litert_std_ms",
                 "load_avg")  # fmt: skip


class DatasetError(EngineError):
    """A dataset file that is missing or unreadable."""


def default_path(adapter: str, root: str | os.PathLike = "data/latency") -> Path:
    return Path(root) / f"{adapter}.csv.gz"


def profile_path(dataset: str | os.PathLike) -> Path:
    """The AdapterProfile sidecar of a dataset: <name>.adapter.json."""
    p = Path(dataset)
    return p.with_name(p.name.removesuffix(".csv.gz") + ".adapter.json")


def row_key(row: dict) -> tuple:
    return (row["hash"], row["config"] if isinstance(row["config"], str) else
            json.dumps(row["config"], sort_keys=True, separators=(",", ":")), row["precision"])  # fmt: skip


def append_rows(path: str | os.PathLike, rows: list[dict]) -> None:
    """Append `rows` (dicts over COLUMNS; JSON columns as Python values) as one gzip member."""
    if not rows:
        return
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    new = not path.exists() or path.stat().st_size == 0
    if not new:
        with gzip.open(path, "rt", newline="") as f:
            header = next(csv.reader(f), [])
        if tuple(header) != COLUMNS:  # rows under another header would be misread
            raise DatasetError(f"{path}: written with older columns; measure into a new file")
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=COLUMNS, extrasaction="raise")
    if new:
        writer.writeheader()
    for row in rows:
        out = {k: row.get(k, "") for k in COLUMNS}
        for k in JSON_COLUMNS:
            if out[k] != "" and not isinstance(out[k], str):
                out[k] = json.dumps(out[k], separators=(",", ":"))
        writer.writerow(out)
    with gzip.open(path, "at", newline="") as f:
        f.write(buf.getvalue())


def read_rows(path: str | os.PathLike) -> list[dict]:
    """Every row, typed: ints, floats, JSON columns parsed ("" -> None)."""
    path = Path(path)
    if not path.exists():
        raise DatasetError(f"{path}: no such latency dataset (make one: engine-latency measure)")
    try:
        with gzip.open(path, "rt", newline="") as f:
            raw = list(csv.DictReader(f))
    except (OSError, EOFError, csv.Error) as exc:
        raise DatasetError(f"{path}: unreadable latency dataset ({exc})") from None
    return [_typed(r) for r in raw]


def _typed(r: dict) -> dict:
    out = dict(r)
    for k in INT_COLUMNS:
        out[k] = int(r[k]) if r.get(k) not in ("", None) else None
    for k in FLOAT_COLUMNS:
        out[k] = float(r[k]) if r.get(k) not in ("", None) else None
    for k in JSON_COLUMNS:
        out[k] = json.loads(r[k]) if r.get(k) not in ("", None) else None
    return out


def merge(parts: list[str | os.PathLike], out: str | os.PathLike,
          order: str | os.PathLike | None = None) -> int:  # fmt: skip
    """The rows of `parts` (shards of one measurement: measure --shard) as one new dataset
    `out`, in `order`'s row order where given (the dataset they re-measured), each row once
    (a key in two parts is an error); the parts' adapter file goes beside it. Returns the
    number of rows."""
    import shutil

    if Path(out).exists():
        raise ValueError(f"{out}: exists; merge writes a new dataset")
    rows, seen = [], set()
    for part in parts:
        for r in read_rows(part):
            key = row_key(r)
            if key in seen:
                raise ValueError(f"{part}: row {key[0]} is in another part too")
            seen.add(key)
            rows.append(r)
    if order is not None:
        place = {row_key(r)[:2]: i for i, r in enumerate(read_rows(order))}
        rows.sort(key=lambda r: place.get(row_key(r)[:2], len(place)))
    for i in range(0, len(rows), 500):
        append_rows(out, rows[i : i + 500])
    sidecar = profile_path(parts[0])
    if sidecar.exists():
        shutil.copyfile(sidecar, profile_path(out))
    return len(rows)
