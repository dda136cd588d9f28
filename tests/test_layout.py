"""The house rules import-linter cannot state: the app sees the engine's public faces only,
and the vision wing decides its backend in one place."""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# what the app may import from the engine: these modules, and from the packages among them
# only the names of their __all__ (their public face)
APP_MAY_IMPORT = ("engine", "engine.errors", "engine.precision", "engine.gpu",
                  "engine.vision", "engine.memory", "engine.catalog", "engine.reference")  # fmt: skip


def _imports(folder: str):
    """(file, module, imported names) of every import under `folder`."""
    for path in sorted((ROOT / folder).rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.ImportFrom) and node.module:
                yield path.relative_to(ROOT), node.module, [a.name for a in node.names]
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    yield path.relative_to(ROOT), alias.name, []


def test_app_imports_only_the_public_faces_of_the_engine():
    reach_ins = [
        f"{path}: {module}"
        for path, module, _ in _imports("app")
        if module.split(".")[0] == "engine" and module not in APP_MAY_IMPORT
    ]
    assert reach_ins == []
    for path, module, names in _imports("app"):
        face = getattr(importlib.import_module(module), "__all__", None)
        if module in APP_MAY_IMPORT and face is not None:
            missing = set(names) - set(face)
            assert not missing, f"{path} imports {missing}, not in {module}.__all__"


def test_the_face_check_sees_a_reach_in():
    """The test above on a made-up app file: a private module and a private name fail."""
    source = "from engine.vision.roi import Rect\nfrom engine.gpu import _PUBLIC\n"
    tree = ast.parse(source)
    modules = [n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
    assert [m for m in modules if m not in APP_MAY_IMPORT] == ["engine.vision.roi"]
    import engine.gpu

    assert "_PUBLIC" not in engine.gpu.__all__


def test_every_public_name_resolves():
    """Each name of each face resolves (a renamed function breaks this, not the app)."""
    for module in APP_MAY_IMPORT:
        mod = importlib.import_module(module)
        for name in getattr(mod, "__all__", ()):
            assert getattr(mod, name) is not None, f"{module}.{name}"


def test_the_backend_is_decided_in_one_place():
    """No solution or stage of engine/vision tests which backend it has: `backend ==` (or
    `backend !=`) appears only in the backend table's module."""
    pattern = re.compile(r"backend\s*[!=]=")
    found = [
        f"{path.relative_to(ROOT)}:{i}"
        for path in sorted((ROOT / "engine" / "vision").rglob("*.py"))
        for i, line in enumerate(path.read_text().splitlines(), 1)
        if pattern.search(line) and path != ROOT / "engine/vision/backends/__init__.py"
    ]
    assert found == []


def _is_test_module(name: str) -> bool:
    """A module pytest collects (test_*.py) or a conftest, by its last dotted part."""
    last = name.rsplit(".", 1)[-1]
    return last == "conftest" or last.startswith("test_")


def imported_test_modules(source: str) -> list[str]:
    """The test modules and conftests that `source` imports, in any spelling:
    `from tests.x.test_y import z`, `import tests.conftest`, `from .test_y import z`,
    `from . import test_y`, `from tests.x import test_y`."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [a.name for a in node.names if _is_test_module(a.name)]
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            local = node.level > 0 or module.split(".")[0] == "tests"
            if local and module and _is_test_module(module):
                found.append(module)
            elif local:
                found += [f"{module}.{a.name}" for a in node.names if _is_test_module(a.name)]
    return found


def test_tests_import_helpers_not_other_test_modules():
    """Shared test code lives in tests/helpers/ (the house rule): a test module imported by
    another runs its module-level code (an adapter probe, a skip) twice and ties the two
    modules' cases together."""
    offenders = [
        f"{path.relative_to(ROOT)}: {name}"
        for path in sorted((ROOT / "tests").rglob("*.py"))
        for name in imported_test_modules(path.read_text())
    ]
    assert offenders == []


def test_the_test_import_check_sees_each_spelling():
    for source in (
        "from tests.gpu.test_conv import CASES",
        "import tests.conftest",
        "from .test_features import PROFILE",
        "from . import test_features",
        "from tests.latency import test_features",
        "def f():\n    from tests.memory.test_records import small_graph",
    ):
        assert imported_test_modules(source), source
    for source in (
        "from tests.helpers.gpu import gpu_context",
        "import pytest",
        "from tests.memory.schedules import random_graphs",
        "from . import helpers",
    ):
        assert imported_test_modules(source) == [], source
