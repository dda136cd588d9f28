"""engine/gpu/wgsl_cache.py: the WGSL read from the disk is the string jinja renders, for
every shader the three core models compile (optimized and compact sets, fp32 and fp16);
a damaged file is rendered again; a changed template, jinja version or variable misses;
variables without a canonical form and a folder that cannot be written cost only the
cache."""

from __future__ import annotations

import numpy as np
import pytest

import engine.gpu.kernels.base as kernels_base
from engine.gpu import codegen, wgsl_cache
from engine.gpu.wgsl_cache import _canonical, _key, cached_render
from tests.helpers.files import model_file
from tests.helpers.gpu import gpu_context

CTX = gpu_context()
CORE = ("face_detection_short_range", "face_landmark", "selfie_segmentation")
SRC = codegen.TEMPLATE_DIR


@pytest.fixture
def folder(tmp_path, monkeypatch):
    monkeypatch.setattr(wgsl_cache, "_folder", lambda: tmp_path / "wgsl")
    return tmp_path / "wgsl"


def _jinja(template: str, params: dict) -> str:
    return codegen._env().get_template(template).render(**params)


def _never() -> str:
    raise AssertionError("rendered, though the disk has it")


@pytest.fixture(scope="module")
def renders():
    """(template, variables) of every shader the core models compile, as the kernels pass
    them to codegen.render (captured around Engine builds, with the cache bypassed)."""
    from engine import Engine

    seen = []
    original = kernels_base.render

    def spy(template, **params):
        seen.append((template, params))
        return _jinja(template, params)

    kernels_base.render = spy
    try:
        for name in CORE:
            for kernels in ("optimized", "compact"):
                for precision in ("fp32", "fp16") if CTX.has_f16 else ("fp32",):
                    Engine.from_tflite(model_file(name), kernels=kernels, precision=precision,
                                       context=CTX)  # fmt: skip
    finally:
        kernels_base.render = original
    assert len(seen) > 100
    return seen


def test_disk_copy_is_what_jinja_renders(folder, renders):
    for template, params in renders:
        want = _jinja(template, params)
        assert cached_render(template, params, lambda w=want: w, SRC) == want
        assert cached_render(template, params, _never, SRC) == want, template
    assert len(list(folder.glob("*.wgsl"))) == len({_key(t, p, SRC) for t, p in renders})


def test_a_damaged_file_is_rendered_again(folder, renders):
    template, params = renders[0]
    want = cached_render(template, params, lambda: _jinja(template, params), SRC)
    (path,) = folder.glob("*.wgsl")
    for damage in (path.read_text()[:-40], "garbage", path.read_text().replace("fn ", "fm ", 1)):
        path.write_text(damage)
        assert cached_render(template, params, lambda: _jinja(template, params), SRC) == want
        assert cached_render(template, params, _never, SRC) == want  # and written again


def test_what_changes_the_key(monkeypatch, renders):
    template, params = renders[0]
    key = _key(template, params, SRC)
    monkeypatch.setattr(wgsl_cache, "_templates_digest", lambda _source: "an edited template")
    assert _key(template, params, SRC) != key
    monkeypatch.undo()
    monkeypatch.setattr(wgsl_cache, "_jinja_version", lambda: "0.0")
    assert _key(template, params, SRC) != key
    monkeypatch.undo()
    assert _key(template, {**params, "workgroup_size": (1, 2, 3)}, SRC) != key
    assert _key(template, params, SRC) == key


def test_canonical_keeps_values_apart():
    forms = [1, 1.0, True, "1", None, (1,), [1], {"a": 1}, np.array([1], np.int32),
             np.array([1], np.float32), np.array([2], np.int32)]  # fmt: skip
    assert len({_canonical(v) for v in forms}) == len(forms)
    assert _canonical({"a": 1, "b": 2}) == _canonical({"b": 2, "a": 1})
    binding = kernels_base.Binding("const", data=np.arange(4), name="w", type="array<f32>")
    other = kernels_base.Binding("const", data=np.arange(4) + 1, name="w", type="array<f32>")
    assert _canonical(binding) != _canonical(other)  # by content, not by repr


def test_no_canonical_form_or_no_folder_costs_only_the_cache(tmp_path, monkeypatch, renders):
    calls = []

    def render():
        calls.append(1)
        return "wgsl"

    monkeypatch.setattr(wgsl_cache, "_folder", lambda: tmp_path / "wgsl")
    assert cached_render("conv1x1.wgsl", {"x": object()}, render, SRC) == "wgsl"
    assert cached_render("conv1x1.wgsl", {"x": object()}, render, SRC) == "wgsl"
    assert cached_render("app/frame.wgsl", {}, render, SRC) == "wgsl"  # another namespace
    assert cached_render("app/frame.wgsl", {}, render, SRC) == "wgsl"
    assert len(calls) == 4 and not (tmp_path / "wgsl").exists()
    blocker = tmp_path / "a file"
    blocker.write_text("")
    monkeypatch.setattr(wgsl_cache, "_folder", lambda: blocker / "wgsl")
    template, params = renders[0]
    assert cached_render(template, params, lambda: _jinja(template, params), SRC) == _jinja(
        template, params
    )
