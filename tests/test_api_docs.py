"""The API reference pages say what the packages export: docs/api/gpu.md documents exactly
engine.gpu's public face, each name at the module engine.gpu resolves it from (mkdocstrings
reads the source statically and cannot follow the face's lazy names, so the page lists them;
this test keeps the two lists one)."""

from __future__ import annotations

import importlib
import re

import engine.gpu
from tests.helpers.files import ROOT


def _documented() -> dict[str, str]:
    """name -> module of every `::: engine.gpu.<module>.<name>` line of the page."""
    text = (ROOT / "docs" / "api" / "gpu.md").read_text()
    pairs = re.findall(r"^::: (engine\.gpu\.[\w.]+)\.(\w+)$", text, flags=re.MULTILINE)
    return {name: module for module, name in pairs}


def test_gpu_api_page_lists_the_public_face():
    assert sorted(_documented()) == sorted(engine.gpu.__all__)


def test_gpu_api_page_documents_each_name_where_it_is_defined():
    for name, module in _documented().items():
        assert getattr(importlib.import_module(module), name) is getattr(engine.gpu, name), name
