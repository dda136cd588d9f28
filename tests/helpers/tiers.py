"""The tiers: markers by what a test needs, so that `-m` picks what a machine can run.

- `gpu`: one WebGPU adapter (lavapipe in CI). A module that calls `gpu_context()` at import
  is in this tier as a whole (the call declares the need, tests/helpers/gpu.py records it);
  a test that asks for an adapter inside its body carries `@pytest.mark.gpu` itself;
- `gl`: the OpenGL (GLES) backend, through EGL (Mesa's llvmpipe in CI): `gl_context()`;
- `slow`: minutes-long cases that CI leaves out (whole clips, fuzz runs, soak): `make
  test-all` runs them.
The Makefile's targets and docs/setup.md say which tiers each runs.
"""

from __future__ import annotations

import pytest

# Modules (their __name__) that called gpu_context() / gl_context() while being imported.
NEEDS: dict[str, set[str]] = {"gpu": set(), "gl": set()}
# A module-level skip with this reason is a tier that `-m` leaves out: its tests would be
# deselected anyway, so tests/helpers/ci.py does not count it as a skip.
NOT_SELECTED = "tier not selected by -m"
_markexpr = ""


def pytest_configure(config):
    global _markexpr
    _markexpr = config.getoption("markexpr", "") or ""


def selected(tier: str, markexpr: str | None = None) -> bool:
    """Could `-m` keep some test marked `tier` (whatever other markers it has: a gpu test
    may be slow too)? True without -m."""
    import itertools
    import re

    from _pytest.mark.expression import Expression

    expr = _markexpr if markexpr is None else markexpr
    if not expr:
        return True
    others = sorted(set(re.findall(r"[A-Za-z_]\w*", expr)) - {"and", "or", "not", tier})
    compiled = Expression.compile(expr)
    for bits in itertools.product((False, True), repeat=len(others)):
        on = {tier, *(name for name, bit in zip(others, bits, strict=True) if bit)}
        if compiled.evaluate(lambda name, on=on, **_: name in on):
            return True
    return False


def record(module: str, tier: str) -> None:
    """`module` needs `tier` as a whole (the context helpers call this at its import); when
    `-m` leaves the tier out the module is skipped before it asks for an adapter, so the
    other tiers run on a machine that has none (.ci/run's extra interpreters do)."""
    NEEDS[tier].add(module)
    if not selected(tier):
        pytest.skip(f"{NOT_SELECTED} ({_markexpr})", allow_module_level=True)


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects by marker
def pytest_collection_modifyitems(config, items):
    for item in items:
        module = getattr(item.module, "__name__", "") if hasattr(item, "module") else ""
        for tier, modules in NEEDS.items():
            if module in modules:
                item.add_marker(tier)
