"""Rendered WGSL on disk: a warm start skips jinja, its import and the templates' rendering
(0.15-0.25 s of a model's set-up on lavapipe, 2 cores: docs/benchmarks.md, "Start-up").

- input: an engine template's name (no namespace prefix: "conv1x1.wgsl"), its variables,
  and the function that renders it when the disk has no copy
- output: the WGSL, the same string the renderer gives (tests/gpu/test_wgsl_cache.py)
- key: sha256 over the engine templates' digest (every .wgsl file of the engine's shader
  folder: an edited template or macro misses), jinja2's version, the template's name and
  its variables in a canonical form. Variables that are not plain data (str, int, float,
  bool, None; tuples, lists and dicts of them; dataclasses, SimpleNamespaces and numpy
  arrays, by content; exact types, so a subclass with its own str() is not plain) are
  never cached: rendered every time.
- value: `<cache root>/wgsl/<key>.wgsl` (the root: engine/gpu/adapter_cache.cache_root),
  its first line "// sha256 <hex of the rest>": a file that does not match is ignored and
  written again; written atomically (a temp file, then os.replace). A folder that cannot be
  written costs nothing but the cache.
- usage: `cached_render("conv1x1.wgsl", params, lambda: env.render(**params), folder)`
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import re
import tempfile
from collections.abc import Callable
from functools import cache
from pathlib import Path
from types import SimpleNamespace

import numpy as np

HEADER = "// sha256 "


class NotPlain(Exception):
    """A template variable without a canonical form: the render is not cached."""


def cached_render(template: str, params: dict, render: Callable[[], str],
                  source_dir: Path) -> str:  # fmt: skip
    """The cached WGSL of `template` with `params`, else `render()` (then stored);
    `source_dir`: the engine's templates in a source checkout (else the installed
    package's `engine/shaders/` resources, as codegen.shader_loader reads them)."""
    try:
        key = _key(template, params, source_dir)
    except NotPlain:
        return render()
    path = _folder() / f"{key}.wgsl"
    text = _read(path)
    if text is None:
        text = render()
        _write(path, text)
    return text


def _key(template: str, params: dict, source_dir: Path) -> str:
    if "/" in template:  # another package's namespace: its folder is not in the digest
        raise NotPlain(template)
    h = hashlib.sha256()
    parts = (_templates_digest(source_dir), _jinja_version(), template, _canonical(params))
    for part in parts:
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()


_LEAVES = frozenset({str, int, float, bool, type(None)})  # repr() tells each apart


def _canonical(value) -> str:
    """A string that differs whenever the rendered WGSL could differ (repr for plain
    values: it keeps 1, 1.0, True and "1" apart, and tuples from lists)."""
    kind = type(value)
    if kind in _LEAVES:
        return repr(value)
    if kind is tuple or kind is list:
        if all(type(v) in _LEAVES for v in value):
            return repr(value)
        inner = ",".join(_canonical(v) for v in value)
        return f"({inner})" if kind is tuple else f"[{inner}]"
    if kind is dict:
        items = sorted((_canonical(k), _canonical(v)) for k, v in value.items())
        return "{" + ",".join(f"{k}:{v}" for k, v in items) + "}"
    if kind is SimpleNamespace:
        return "namespace" + _canonical(vars(value))
    if kind is np.ndarray:
        digest = hashlib.sha256(np.ascontiguousarray(value).tobytes()).hexdigest()
        return f"ndarray({value.dtype.str},{value.shape},{digest})"
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
        return f"{kind.__module__}.{kind.__qualname__}{_canonical(fields)}"
    raise NotPlain(kind.__name__)


@cache
def _templates_digest(source_dir: Path) -> str:
    """sha256 over the names and contents of every engine template (sorted)."""
    h = hashlib.sha256()
    for name, data in sorted(_engine_templates(source_dir)):
        h.update(name.encode() + b"\0" + data + b"\0")
    return h.hexdigest()


def _engine_templates(source: Path) -> list[tuple[str, bytes]]:
    """(relative name, bytes) of the engine's .wgsl files, where codegen reads them from."""
    if source.is_dir():
        return [(p.relative_to(source).as_posix(), p.read_bytes()) for p in source.rglob("*.wgsl")]
    from importlib.resources import files

    out, stack = [], [(files("engine") / "shaders", "")]
    while stack:
        folder, prefix = stack.pop()
        for entry in folder.iterdir():
            if entry.is_dir():
                stack.append((entry, f"{prefix}{entry.name}/"))
            elif entry.name.endswith(".wgsl"):
                out.append((prefix + entry.name, entry.read_bytes()))
    return out


@cache
def _jinja_version() -> str:
    """jinja2.__version__ read from its source (importing jinja2 is what the cache saves;
    importlib.metadata costs ~0.1 s)."""
    from importlib.util import find_spec

    spec = find_spec("jinja2")
    if spec is None or spec.origin is None:
        return "jinja2 missing"
    match = re.search(r'__version__\s*=\s*"([^"]+)"', Path(spec.origin).read_text())
    return match.group(1) if match else "unknown"


def _folder() -> Path:
    from engine.gpu.adapter_cache import cache_root

    return cache_root() / "wgsl"


def _read(path: Path) -> str | None:
    try:
        text = path.read_text()
    except (OSError, UnicodeDecodeError):
        return None
    first, _, body = text.partition("\n")
    if first != HEADER + hashlib.sha256(body.encode()).hexdigest():
        return None  # damaged or cut short: rendered and written again
    return body


def _write(path: Path, text: str) -> None:
    data = f"{HEADER}{hashlib.sha256(text.encode()).hexdigest()}\n{text}"
    tmp = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".wgsl")
        with os.fdopen(fd, "w") as f:
            f.write(data)
        os.replace(tmp, path)
    except OSError:  # a read-only or full cache folder: no cache, the same WGSL
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)
