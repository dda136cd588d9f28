"""engine/gpu/wgpu_abi.py: the prebuilt FFI lays out every C type exactly as wgpu-py's own
in-line parse of the same header, a fresh process runs an engine on it (and builds the
cache once, then reads it), and anything unexpected leaves wgpu-py's import as it was."""

from __future__ import annotations

import json
import marshal
import os
import re
import subprocess
import sys
import textwrap

import pytest
from cffi import FFI

from engine.gpu import wgpu_abi
from tests.helpers.gpu import gpu_context

gpu_context()  # skips the module without an adapter


def _layout(ffi, name: str):
    """What code built on `ffi` sees of a type: size, alignment and each field's offset
    and type; None for a type with no size (opaque handles, functions: the two FFIs raise
    different exception classes for those, so any exception counts)."""
    try:
        tp = ffi.typeof(name)
        size, align = ffi.sizeof(tp), ffi.alignof(tp)
    except Exception:
        return None
    fields = tp.fields if tp.kind in ("struct", "union") else []
    fields = [(f, t.offset, _bare(t.type.cname), t.bitsize) for f, t in fields]
    return tp.kind, _bare(tp.cname), size, align, fields


def _bare(cname: str) -> str:
    """The in-line FFI names a typedef'd struct by its typedef ("WGPUExtent3D"), the
    C-level one by its tag ("struct WGPUExtent3D"): the same type, two spellings."""
    return re.sub(r"\b(struct|union|enum) ", "", cname)


@pytest.fixture(scope="module")
def both():
    header = wgpu_abi._header_text()
    inline = FFI()
    inline.cdef(header)
    return inline, wgpu_abi._load(wgpu_abi._build(header), header)


def test_every_type_has_the_layout_of_wgpu_pys_own_parse(both):
    inline, prebuilt = both
    typedefs, structs, unions = prebuilt.list_types()
    assert (typedefs, structs, unions) == inline.list_types()
    names = typedefs + [f"struct {s}" for s in structs] + [f"union {u}" for u in unions]
    assert len(names) > 300  # webgpu.h and wgpu.h, not an empty header
    sized = [n for n in names if _layout(inline, n) is not None]
    assert len(sized) > 200
    assert {n: _layout(prebuilt, n) for n in names} == {n: _layout(inline, n) for n in names}


def test_constants_and_callbacks_match(both):
    inline, prebuilt = both
    lib_in, lib_pre = inline.dlopen(None), prebuilt.dlopen(None)
    for name in ("WGPUBufferUsage_Storage", "WGPUTextureFormat_RGBA16Float",
                 "WGPUFeatureName_ShaderF16", "WGPU_WHOLE_SIZE"):  # fmt: skip
        assert getattr(lib_pre, name) == getattr(lib_in, name)
    sig = "void(WGPUMapAsyncStatus, WGPUStringView, void *, void *)"
    made = [ffi.typeof(ffi.callback(sig)(lambda *a: None)).cname for ffi in (prebuilt, inline)]
    assert _bare(made[0]) == _bare(made[1]) == "void(*)(" + sig[5:]


def test_a_different_header_is_refused(both):
    _inline, prebuilt = both
    with pytest.raises(ImportError, match="differs"):
        prebuilt.cdef("typedef int other;")


SCRIPT = textwrap.dedent(
    """
    import json, sys
    import numpy as np
    from engine.gpu import wgpu_abi

    how = wgpu_abi.install(sys.argv[1])
    from wgpu.backends.wgpu_native._ffi import ffi
    import cffi
    from engine.gpu.engine import Engine
    from engine.model.ir import Graph, Op, Tensor

    tensors = [Tensor(n, (1, 4, 4, 8), "float32") for n in ("x", "h", "y")]
    graph = Graph(tensors, [Op("RELU", (0,), (1,)), Op("RELU6", (1,), (2,))], [0], [2])
    x = np.linspace(-8, 8, 128, dtype=np.float32).reshape(1, 4, 4, 8)
    ok = []
    for storage in ("buffer", "texture"):
        y = Engine(graph, storage=storage).run({"x": x})["y"]
        ok.append(bool(np.array_equal(y, np.clip(x, 0, 6))))
    print(json.dumps({"how": how, "inline_ffi": isinstance(ffi, cffi.FFI), "ok": ok,
                      "again": wgpu_abi.install(sys.argv[1])}))
    """
)


def _fresh_process(script: str, cache_dir, *args: str, env=None) -> dict:
    out = subprocess.run([sys.executable, "-c", script, str(cache_dir), *args], env=env,
                         capture_output=True, text=True, timeout=300, check=True)  # fmt: skip
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_a_fresh_process_builds_the_cache_then_reads_it(tmp_path):
    first = _fresh_process(SCRIPT, tmp_path)
    assert first == {"how": "prebuilt", "inline_ffi": False, "ok": [True, True],
                     "again": "imported"}  # fmt: skip
    (cached,) = tmp_path.glob("wgpu_abi_*.marshal")
    stamp = cached.stat().st_mtime_ns
    assert _fresh_process(SCRIPT, tmp_path)["how"] == "prebuilt"
    assert cached.stat().st_mtime_ns == stamp  # read, not rebuilt
    cached.write_bytes(b"damaged")  # rebuilt, not trusted
    assert _fresh_process(SCRIPT, tmp_path)["how"] == "prebuilt"
    assert "_types" in marshal.loads(cached.read_bytes())


FAILING = textwrap.dedent(
    """
    import json, sys
    from engine.errors import DeviceError
    from engine.gpu import wgpu_abi
    from engine.gpu.device import GpuContext

    if sys.argv[2] == "other header":  # tables that do not fit: cdef refuses them
        tables = wgpu_abi._build(wgpu_abi._header_text())
        how = wgpu_abi._import_backend_with(wgpu_abi._load(tables, "typedef int x;"))
    else:
        how = wgpu_abi.install(sys.argv[1])
    try:
        ctx = GpuContext.create()
        error = None
    except DeviceError as exc:
        error = str(exc)
    print(json.dumps({"how": how, "error": error}))
    """
)


def test_a_missing_native_library_is_still_a_device_error(tmp_path):
    """The backend's import fails inside install(): forgotten, and the plain import in
    pick_adapter() reports it as it always did."""
    env = {**os.environ, "WGPU_LIB_PATH": str(tmp_path / "no" / "libwgpu_native.so")}
    got = _fresh_process(FAILING, tmp_path, "install", env=env)
    assert got["how"].startswith("fallback")
    assert got["error"] and "cannot enumerate WebGPU adapters" in got["error"]


def test_a_refused_header_falls_back_to_wgpu_pys_own_import(tmp_path):
    got = _fresh_process(FAILING, tmp_path, "other header")
    assert got["how"].startswith("fallback: ImportError") and "differs" in got["how"]
    assert got["error"] is None  # the plain import made a device


def test_an_unwritable_cache_still_gives_the_prebuilt_ffi(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    header = wgpu_abi._header_text()
    ffi = wgpu_abi._prebuilt_ffi(header, blocker / "cffi" / "wgpu_abi_x.marshal")  # no mkdir
    assert ffi.sizeof("WGPUBufferDescriptor") > 0
    assert list(tmp_path.iterdir()) == [blocker]  # no temporary file left behind


def test_after_wgpu_pys_own_import_nothing_is_done():
    assert wgpu_abi.install() == "imported"  # gpu_context() imported the backend
