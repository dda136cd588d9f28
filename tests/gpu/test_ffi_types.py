"""engine/gpu/ffi_types.py: the C types parsed in one go are the ones cffi parses one by
one, and an engine (buffers and textures, its profile) needs no other. Run in a fresh
process: cffi's cache is per process, and earlier tests have filled this one's."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

from engine.gpu.ffi_types import WGPU_TYPES, preparse
from tests.gpu.util import gpu_context

gpu_context()  # skips the module without an adapter

SCRIPT = textwrap.dedent(
    """
    import json
    import cffi.cparser

    parsed = []  # every type string cffi parses from here on
    lazy_parse = cffi.cparser.Parser.parse_type_and_quals

    def recording(self, cdecl):
        parsed.append(cdecl)
        return lazy_parse(self, cdecl)

    cffi.cparser.Parser.parse_type_and_quals = recording

    import numpy as np
    from wgpu.backends.wgpu_native._ffi import ffi

    from engine.gpu.engine import Engine
    from engine.gpu.ffi_types import WGPU_TYPES, preparse
    from engine.model.ir import Graph, Op, Tensor

    before = len(parsed)  # wgpu-py's import parses its logger callback: the hook works
    ok = preparse()
    bulk = {t: ffi._parsed_types[t] for t in WGPU_TYPES}
    start = len(parsed)
    tensors = [Tensor(n, (1, 4, 4, 8), "float32") for n in ("x", "h", "y")]
    graph = Graph(tensors, [Op("RELU", (0,), (1,)), Op("RELU6", (1,), (2,))], [0], [2])
    feeds = {"x": np.linspace(-8, 8, 128, dtype=np.float32).reshape(1, 4, 4, 8)}
    for storage in ("buffer", "texture"):
        engine = Engine(graph, storage=storage)
        engine.run(feeds)
        if engine.ctx.has_timestamps:
            engine.profile(feeds)
    after = parsed[start:]
    with ffi._lock:  # now the lazy way, type by type
        ffi._parsed_types.clear()
        same = [t for t in WGPU_TYPES if ffi._typeof_locked(t) == bulk[t]]
    print(json.dumps({"ok": ok, "recorded_before": before, "parsed_by_the_engine": after,
                      "same": len(same)}))
    """
)


def test_types_parsed_in_one_go_match_cffi_and_cover_an_engine():
    out = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True,
                         timeout=300, check=True)  # fmt: skip
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["recorded_before"] > 0  # else the recording hook sees nothing
    assert result["ok"]
    assert result["same"] == len(WGPU_TYPES)
    assert result["parsed_by_the_engine"] == []


def test_a_type_the_header_lacks_leaves_parsing_to_cffi():
    assert preparse(("WGPUNoSuchThing *",)) is False


def test_a_cache_of_another_shape_is_left_alone():
    from engine.gpu.ffi_types import _cache_is_as_expected

    assert _cache_is_as_expected({"__name__": "parsed_types", "int *": (object(), False)})
    assert not _cache_is_as_expected({"__name__": "parsed_types", "int *": object()})
    assert not _cache_is_as_expected({"__name__": "parsed_types"})
