"""Private names stay private: no module of engine, app or benchmarks imports a `_name`
from another of the project's modules, imports a `_module`, or reads `module._name`
through a project module it imported (engine-latency once swapped `render` in every
kernel module and read codegen's `_env`). Dunder names (`__version__`) are public."""

from __future__ import annotations

import ast

from tests.helpers.files import ROOT

PACKAGES = ("engine", "app", "benchmarks")


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _module_name(path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(p): p for pkg in PACKAGES for p in sorted((ROOT / pkg).rglob("*.py"))}


def reach_ins(module: str, tree: ast.Module) -> list[str]:
    """`line: what` for each private name `module` takes from another project module."""
    found, bound = [], {}  # bound: local name -> the project module it stands for
    package = module if MODULES[module].name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            base = package.rsplit(".", node.level - 1)[0] if node.level else ""
            source = ".".join(p for p in (base, node.module or "") if p)
            if source.split(".")[0] not in PACKAGES:
                continue
            if any(_private(p) for p in source.split(".")):
                found.append(f"{node.lineno}: from {source} import ...")
            for alias in node.names:
                if _private(alias.name):
                    found.append(f"{node.lineno}: from {source} import {alias.name}")
                if f"{source}.{alias.name}" in MODULES:
                    bound[alias.asname or alias.name] = f"{source}.{alias.name}"
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] not in PACKAGES:
                    continue
                if any(_private(p) for p in alias.name.split(".")):
                    found.append(f"{node.lineno}: import {alias.name}")
                local = alias.asname or alias.name.split(".")[0]
                bound[local] = alias.name if alias.asname else local
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _private(node.attr):
            chain, value = [], node.value
            while isinstance(value, ast.Attribute):
                chain.insert(0, value.attr)
                value = value.value
            if isinstance(value, ast.Name) and value.id in bound:
                owner = ".".join([bound[value.id], *chain])
                if owner in MODULES and owner != module:
                    found.append(f"{node.lineno}: {owner}.{node.attr}")
    return sorted(found, key=lambda f: int(f.split(":")[0]))


def test_no_module_reaches_into_another():
    found = {m: reach_ins(m, ast.parse(p.read_text(), str(p))) for m, p in MODULES.items()}
    assert {m: f for m, f in found.items() if f} == {}


def test_reach_ins_are_found():
    """The checker sees each form (the test above would pass vacuously otherwise)."""
    code = """
from engine.gpu.codegen import _env
from engine.gpu import codegen
import engine.gpu.kernels.base as base
import engine
from engine.vision._gpu import bind_group
from . import _sibling
codegen._env()
base._load()
engine.gpu.codegen._namespaces
codegen.render  # public: fine
"""
    found = reach_ins("engine.latency.dispatches", ast.parse(code))
    assert [f.split(": ", 1)[1] for f in found] == [
        "from engine.gpu.codegen import _env",
        "from engine.vision._gpu import ...",
        "from engine.latency import _sibling",
        "engine.gpu.codegen._env",
        "engine.gpu.kernels.base._load",
        "engine.gpu.codegen._namespaces",
    ]
