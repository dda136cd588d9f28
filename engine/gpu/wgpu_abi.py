"""wgpu-py's C declarations compiled once into cffi's out-of-line form: 0.1-0.2 s off
every start after the first.

wgpu-py (0.32) talks to wgpu-native through cffi in in-line ABI mode: its import runs
`ffi.cdef()` over a 108 KB header (pycparser, 0.1-0.2 s), and every C type string it
uses later (`ffi.new("WGPUBufferDescriptor *")`) is parsed by pycparser again, over a
prelude of every typedef: about 13 ms per type, 0.5 s for the 40 types an engine uses.

cffi's out-of-line ABI mode does the header parse at build time: `emit_python_code()`
writes a module holding compact type tables, which loads in about 6 ms, and the FFI it
makes parses type strings in C (75 types: 0.5 ms). `install()` writes that module for
the installed wgpu-py's header into the cache (`<cache root>/cffi/`, named by a hash of
the header and the cffi version, like a .pyc) and hands its FFI to wgpu-py's import.
The one hook: `cffi.FFI` is replaced while `wgpu.backends.wgpu_native` is imported, by
a factory whose first call returns the prebuilt FFI; a subclass of cffi's own C-level
FFI whose `cdef()` checks it is given the header the tables were built from and
`set_source()` does nothing. Everything else wgpu-py calls (new, cast, callback, string,
from_buffer, dlopen, NULL) is cffi's, unchanged.

Anything unexpected (wgpu-py already imported, a header that differs, a cffi whose
output looks different) leaves wgpu-py's own import to run as it always did: slower,
never different. An unwritable cache only means every start builds the tables again; a
damaged file is rebuilt. The file is run with exec() like any module: it is as trusted as
the rest of the user's cache (and the .pyc files Python writes there).
tests/gpu/test_wgpu_abi.py checks that every struct has the same size and field offsets
both ways.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import io
import logging
import os
import sys
import tempfile
from pathlib import Path

log = logging.getLogger(__name__)

BACKEND = "wgpu.backends.wgpu_native"
MODULE_NAME = "_wgpu_abi"  # the name cffi records in the tables
# cffi's emit_python_code output starts with these; they become the subclass below
_IMPORT_LINE = "import _cffi_backend\n"
_CONSTRUCTOR = "_cffi_backend.FFI("


def install(cache_dir: str | os.PathLike | None = None) -> str:
    """Make wgpu-py's coming import use the prebuilt FFI. Returns what happened:
    "prebuilt", "imported" (wgpu-py's backend was imported already) or "fallback: why"."""
    if f"{BACKEND}._ffi" in sys.modules:
        return "imported"
    try:
        header = _header_text()
        folder = Path(cache_dir) if cache_dir is not None else _default_dir()
        ffi = _prebuilt_ffi(header, folder / f"wgpu_abi_{_key(header)}.py")
    except Exception as exc:  # cffi or wgpu-py changed: their own import still works
        log.debug("wgpu-py's header parsed at import, as usual: %s", exc)
        return f"fallback: {exc}"
    return _import_backend_with(ffi)


def _header_text() -> str:
    from wgpu._coreutils import get_header_filename

    return Path(get_header_filename("combined_header.h")).read_text()


def _key(header: str) -> str:
    import cffi

    text = f"cffi {cffi.__version__}\n{header}"
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _default_dir() -> Path:
    from engine.gpu.adapter_cache import cache_root

    return cache_root() / "cffi"


def _prebuilt_ffi(header: str, path: Path):
    """The FFI from the module at `path`; built and written there first when missing or
    unreadable (a damaged file is replaced, not trusted)."""
    if path.is_file():
        try:
            return _load(path.read_text(), header)
        except Exception as exc:
            log.debug("rebuilding %s: %s", path, exc)
    text = _build(header)
    ffi = _load(text, header)
    try:
        _write_atomically(path, text)
    except OSError as exc:  # a read-only cache: every start pays the parse, as before
        log.debug("cannot cache wgpu-py's compiled header in %s: %s", path.parent, exc)
    return ffi


def _write_atomically(path: Path, text: str) -> None:
    """Another process may be writing the same file: each writes its own, then renames."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.replace(tmp, path)
    finally:
        Path(tmp).unlink(missing_ok=True)


def _build(header: str) -> str:
    """cffi's out-of-line ABI module for `header` (the parse wgpu-py's import would do)."""
    from cffi import FFI

    builder = FFI()
    builder.cdef(header)
    builder.set_source(MODULE_NAME, None)  # None: ABI mode, a .py and no C compiler
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / f"{MODULE_NAME}.py"
        with contextlib.redirect_stdout(io.StringIO()):  # cffi prints "generating ..."
            builder.emit_python_code(str(out))
        text = out.read_text()
    if text.count(_IMPORT_LINE) != 1 or text.count(_CONSTRUCTOR) != 1:
        raise ValueError("cffi's emitted module has an unexpected shape")
    return text.replace(_IMPORT_LINE, "").replace(_CONSTRUCTOR, "PrebuiltFFI(")


def _load(source: str, header: str):
    """Run the module text: its one statement makes the FFI from the tables."""
    import _cffi_backend

    class PrebuiltFFI(_cffi_backend.FFI):
        """cffi's C-level FFI, plus the two builder calls wgpu-py's import makes."""

        def cdef(self, csource: str, *args, **kwargs) -> None:
            if csource != header:
                raise ImportError("wgpu-py's header differs from the prebuilt one")

        def set_source(self, module_name: str, source, *args, **kwargs) -> None:
            pass  # wgpu-py names it "wgpu.h", source None: nothing to build

    namespace = {"PrebuiltFFI": PrebuiltFFI, "__name__": MODULE_NAME}
    exec(compile(source, f"<{MODULE_NAME}>", "exec"), namespace)
    return namespace["ffi"]


def _import_backend_with(ffi) -> str:
    """Import wgpu-py's backend with `cffi.FFI()` answering `ffi` once."""
    import cffi

    original = cffi.FFI
    handed = []

    def factory(*args, **kwargs):
        if handed or args or kwargs:
            return original(*args, **kwargs)
        handed.append(ffi)
        return ffi

    cffi.FFI = factory
    try:
        importlib.import_module(BACKEND)
    except ImportError as exc:  # our cdef check: forget the half import, do it plainly
        for name in [n for n in sys.modules if n == BACKEND or n.startswith(BACKEND + ".")]:
            del sys.modules[name]
        cffi.FFI = original
        importlib.import_module(BACKEND)
        return f"fallback: {exc}"
    finally:
        cffi.FFI = original
    return "prebuilt" if handed else "fallback: wgpu-py made no FFI"
