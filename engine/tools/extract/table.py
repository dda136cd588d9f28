"""Parquet result files: the schema from the solutions' declared fields, written atomically.

- `arrow_schema(fields, metadata)`: a solution's FIELDS (engine/vision/records.py) -> a pyarrow
  schema: float32 / int32 / bool / string scalars; a fixed shape (n, 3) -> fixed_size_list
  (fixed_size_list(float32, 3), n), a free first dimension -> list(...); a list of items
  -> list(struct); a group -> struct. Every field is nullable.
- `ResultFile(path, schema)`: rows written into a temporary `.NAME.part-PID` beside the
  result, then os.replace: a reader (or a resumed run) sees a whole file or none; the
  temporary is removed when the run fails or is interrupted (a SIGKILL can leave one: it
  is never read, and the next run of that video writes its own)
- deterministic bytes: the metadata holds no time and no host, so the same frames, options
  and versions give the same file (the --ray test compares bytes)
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

INSTALL = "pip install 'webgpu-ar[extract]'"


def pyarrow():
    """pyarrow, or ImportError with the pip command (an extra, not a dependency)."""
    try:
        import pyarrow
        import pyarrow.parquet  # noqa: F401 (the submodule ResultFile uses)
    except ImportError:
        raise ImportError(f"engine-extract writes Parquet through pyarrow: `{INSTALL}`") from None
    return pyarrow


def arrow_type(spec):
    pa = pyarrow()
    if isinstance(spec, str):
        return {"float32": pa.float32(), "int32": pa.int32(), "bool": pa.bool_(),
                "string": pa.string()}[spec]  # fmt: skip
    if isinstance(spec, dict):
        return pa.struct([(k, arrow_type(v)) for k, v in spec.items()])
    if isinstance(spec, list):
        return pa.list_(arrow_type(spec[0]))
    dtype, *shape = spec
    t = arrow_type(dtype)
    for n in reversed(shape):
        t = pa.list_(t) if n is None else pa.list_(t, n)
    return t


def arrow_schema(fields: dict, metadata: dict[str, str]):
    pa = pyarrow()
    return pa.schema([(k, arrow_type(v)) for k, v in fields.items()], metadata=metadata)


def plain(value, spec):
    """A record's value as the Python values its Parquet column holds (float32 scalars
    rounded to float32, arrays as nested lists): what reading the file back gives."""
    if value is None:
        return None
    if isinstance(spec, dict):
        return {k: plain(value.get(k), s) for k, s in spec.items()}
    if isinstance(spec, list):
        return [plain(v, spec[0]) for v in value]
    if isinstance(spec, tuple):
        return np.asarray(value, spec[0]).tolist()
    if spec == "float32":
        return float(np.float32(value))
    return {"int32": int, "bool": bool, "string": str}[spec](value)


class ResultFile:
    """One video's Parquet file, written as it goes into a temporary `.NAME.part-PID` beside
    `path` (row groups of ROW_GROUP frames: memory stays flat on long videos) and moved to
    `path` by commit(); close() without commit() (an error, Ctrl-C) removes the temporary.
    usage: `with ResultFile(path, schema) as f: f.append(row); ...; f.commit()`"""

    ROW_GROUP = 256

    def __init__(self, path: Path, schema):
        self.pa, self.path, self.schema = pyarrow(), Path(path), schema
        self.tmp = self.path.with_name(f".{self.path.name}.part-{os.getpid()}")
        self.writer = self.pa.parquet.ParquetWriter(self.tmp, schema)
        self.rows: list[dict] = []

    def append(self, row: dict) -> None:
        self.rows.append(row)
        if len(self.rows) == self.ROW_GROUP:
            self._flush()

    def _flush(self) -> None:
        if self.rows:
            self.writer.write_table(self.pa.Table.from_pylist(self.rows, schema=self.schema))
            self.rows = []

    def commit(self) -> None:
        self._flush()
        self.writer.close()
        os.replace(self.tmp, self.path)

    def close(self) -> None:
        if self.writer.is_open:
            self.writer.close()
        self.tmp.unlink(missing_ok=True)

    def __enter__(self) -> ResultFile:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
