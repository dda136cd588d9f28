"""wgpu-py's C declarations compiled once into cffi's out-of-line form: 0.15-0.2 s off
every start after the first (docs/benchmarks.md, "Start-up").

wgpu-py (0.32) talks to wgpu-native through cffi in in-line ABI mode: its import runs
`ffi.cdef()` over a 108 KB header (pycparser, 0.1-0.2 s), and every C type string it
uses later (`ffi.new("WGPUBufferDescriptor *")`) is parsed by pycparser again, over a
prelude of every typedef: about 13 ms per type, 0.5 s for the 40 types an engine uses.

cffi's out-of-line ABI mode does the header parse at build time: `emit_python_code()`
writes a module whose one statement builds cffi's C-level FFI from compact type tables,
and that FFI parses type strings in C (75 types: 0.5 ms). Those tables are literals:
`install()` keeps them, marshalled, in the cache (`<cache root>/cffi/`, one small file per
header, cffi and Python version, like a .pyc), so a later start loads them in well under
a millisecond and executes nothing from the cache. The FFI is handed to wgpu-py's import
through the one hook: `cffi.FFI` is replaced while `wgpu.backends.wgpu_native` is imported
(under a lock), by a factory that answers wgpu-py's `_ffi` module, once, with a subclass
of cffi's C-level FFI whose `cdef()` checks it is given the header the tables were built
from and `set_source()` does nothing. Everything else wgpu-py calls (new, cast, callback,
string, from_buffer, dlopen, NULL) is cffi's, unchanged.

Anything unexpected (wgpu-py already imported, a header that differs, a cffi whose
output looks different, a backend import that fails for any reason) forgets the half
import and leaves wgpu-py's own import to the caller, as it always was: slower, never
different, its errors reported where they always were (device.pick_adapter). An
unwritable cache only means every start builds the tables again; a damaged file is
rebuilt. tests/gpu/test_wgpu_abi.py checks that every struct has the same size and
field offsets both ways.
"""

from __future__ import annotations

import ast
import contextlib
import hashlib
import importlib
import io
import logging
import marshal
import os
import sys
import tempfile
import threading
from pathlib import Path

log = logging.getLogger(__name__)

BACKEND = "wgpu.backends.wgpu_native"
FFI_MODULE = f"{BACKEND}._ffi"  # the module of wgpu-py that makes its FFI
MODULE_NAME = "_wgpu_abi"  # the name cffi records in the tables
FORMAT = 2  # of the cached file; part of its name, so a new format never reads an old one
_lock = threading.Lock()


def install(cache_dir: str | os.PathLike | None = None) -> str:
    """Make wgpu-py's coming import use the prebuilt FFI. Returns what happened:
    "prebuilt", "imported" (wgpu-py's backend was imported already) or "fallback: why"."""
    with _lock:
        if FFI_MODULE in sys.modules:
            return "imported"
        try:
            header = _header_text()
            folder = Path(cache_dir) if cache_dir is not None else _default_dir()
            ffi = _prebuilt_ffi(header, folder / f"wgpu_abi_{_key(header)}.marshal")
        except Exception as exc:  # cffi or wgpu-py changed: their own import still works
            log.debug("wgpu-py's header parsed at import, as usual: %s", exc)
            return f"fallback: {exc}"
        return _import_backend_with(ffi)


def _header_text() -> str:
    from wgpu._coreutils import get_header_filename

    return Path(get_header_filename("combined_header.h")).read_text()


def _key(header: str) -> str:
    import cffi

    python = ".".join(map(str, sys.version_info[:2]))  # marshal's format may change
    text = f"format {FORMAT}\ncffi {cffi.__version__}\npython {python}\n{header}"
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _default_dir() -> Path:
    from engine.gpu.adapter_cache import cache_root

    return cache_root() / "cffi"


def _prebuilt_ffi(header: str, path: Path):
    """The FFI from the tables at `path`; built and written there first when missing or
    unreadable (a damaged file is replaced, not trusted)."""
    if path.is_file():
        try:
            return _load(marshal.loads(path.read_bytes()), header)
        except Exception as exc:
            log.debug("rebuilding %s: %s", path, exc)
    tables = _build(header)
    ffi = _load(tables, header)
    try:
        _write_atomically(path, marshal.dumps(tables))
    except OSError as exc:  # a read-only cache: every start pays the parse, as before
        log.debug("cannot cache wgpu-py's compiled header in %s: %s", path.parent, exc)
    return ffi


def _write_atomically(path: Path, data: bytes) -> None:
    """Another process may be writing the same file: each writes its own, then renames."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    finally:
        Path(tmp).unlink(missing_ok=True)


def _build(header: str) -> dict:
    """The keyword arguments (type tables, all literals) of the FFI that cffi's
    out-of-line ABI module for `header` makes: the parse wgpu-py's import would do."""
    from cffi import FFI

    builder = FFI()
    builder.cdef(header)
    builder.set_source(MODULE_NAME, None)  # None: ABI mode, a .py and no C compiler
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / f"{MODULE_NAME}.py"
        with contextlib.redirect_stdout(io.StringIO()):  # cffi prints "generating ..."
            builder.emit_python_code(str(out))
        module = ast.parse(out.read_text())
    calls = [node.value for node in module.body
             if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call)]  # fmt: skip
    if len(calls) != 1 or [ast.literal_eval(a) for a in calls[0].args] != [MODULE_NAME]:
        raise ValueError("cffi's emitted module has an unexpected shape")
    return {kw.arg: ast.literal_eval(kw.value) for kw in calls[0].keywords}


def _load(tables: dict, header: str):
    """cffi's C-level FFI made from the tables, with the two builder calls wgpu-py's
    import makes."""
    import _cffi_backend

    class PrebuiltFFI(_cffi_backend.FFI):
        def cdef(self, csource: str, *args, **kwargs) -> None:
            if csource != header:
                raise ImportError("wgpu-py's header differs from the prebuilt one")

        def set_source(self, module_name: str, source, *args, **kwargs) -> None:
            pass  # wgpu-py names it "wgpu.h", source None: nothing to build

    return PrebuiltFFI(MODULE_NAME, **tables)


def _import_backend_with(ffi) -> str:
    """Import wgpu-py's backend with `cffi.FFI()`, called from its `_ffi` module, answering
    `ffi` once. Any failure: the half import is forgotten and the caller's plain import
    of wgpu-py meets (and reports) whatever went wrong, as without this module."""
    import cffi

    original = cffi.FFI
    handed = []

    def factory(*args, **kwargs):
        caller = sys._getframe(1).f_globals.get("__name__")
        if handed or args or kwargs or caller != FFI_MODULE:
            return original(*args, **kwargs)
        handed.append(ffi)
        return ffi

    cffi.FFI = factory
    try:
        importlib.import_module(BACKEND)
    except Exception as exc:
        for name in [n for n in sys.modules if n == BACKEND or n.startswith(BACKEND + ".")]:
            del sys.modules[name]
        return f"fallback: {type(exc).__name__}: {exc}"
    finally:
        cffi.FFI = original
    return "prebuilt" if handed else "fallback: wgpu-py made no FFI"
