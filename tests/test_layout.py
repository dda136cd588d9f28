"""The house rules import-linter cannot state: the app sees engine.gpu's public face only."""

from __future__ import annotations

import ast
from pathlib import Path

import engine.gpu

ROOT = Path(__file__).resolve().parents[1]


def _imports(folder: str):
    """(file, module, imported names) of every `from X import ...` under `folder`."""
    for path in sorted((ROOT / folder).rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.ImportFrom) and node.module:
                yield path.relative_to(ROOT), node.module, [a.name for a in node.names]
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    yield path.relative_to(ROOT), alias.name, []


def test_app_imports_only_the_public_face_of_engine_gpu():
    reach_ins = [
        f"{path}: {module}"
        for path, module, _ in _imports("app")
        if module.startswith("engine.gpu.")
    ]
    assert reach_ins == []
    for path, module, names in _imports("app"):
        if module == "engine.gpu":
            missing = set(names) - set(engine.gpu.__all__)
            assert not missing, f"{path} imports {missing}, not in engine.gpu.__all__"


def test_every_public_name_of_engine_gpu_resolves():
    """Each name of the face resolves (a renamed function breaks this, not the app)."""
    for name in engine.gpu.__all__:
        assert getattr(engine.gpu, name) is not None, name
