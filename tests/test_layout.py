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
