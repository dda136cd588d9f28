"""WGSL from templates: jinja2 with StrictUndefined, so a missing variable is an
error. The rendered source is the pipeline cache key: same source, same pipeline.

Where templates come from (pygfx's scheme): the engine's own are in
`shaders/engine/` of a source checkout and in the wheel's `engine/shaders/`
(package resources); another package registers a namespace of its own
(`register_shaders("app", shader_loader("app", ...))`) and names its templates
"app/<file>.wgsl". Unprefixed names are the engine's, so any namespace's
templates can include the engine's macros ("common.wgsl").
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from engine.gpu.wgsl_cache import cached_render
from engine.model.elementwise import UNARY

if TYPE_CHECKING:  # jinja2 is imported where a template is rendered: engine-latency
    import jinja2  # predict compiles without rendering, and its import was ~10% of it

REPO_ROOT = Path(__file__).resolve().parents[2]  # a source checkout's root (or site-packages)
TEMPLATE_DIR = REPO_ROOT / "shaders" / "engine"  # in a checkout; else package resources


def shader_loader(package: str, source_dir: Path) -> jinja2.BaseLoader:
    """`source_dir` in a source checkout; else the installed package's `shaders/` resources."""
    import jinja2

    if source_dir.is_dir():
        return jinja2.FileSystemLoader(str(source_dir))
    return jinja2.PackageLoader(package, "shaders")


_namespaces: dict[str, jinja2.BaseLoader] = {}


def register_shaders(namespace: str, loader: jinja2.BaseLoader) -> None:
    """Templates of another package, named "<namespace>/<file>.wgsl"."""
    _namespaces[namespace] = loader
    _env.cache_clear()


@cache
def _env() -> jinja2.Environment:
    import jinja2

    engine = shader_loader("engine", TEMPLATE_DIR)
    return jinja2.Environment(
        loader=jinja2.ChoiceLoader([jinja2.PrefixLoader(dict(_namespaces)), engine]),
        bytecode_cache=_bytecode_cache(),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )


def _bytecode_cache() -> jinja2.BytecodeCache | None:
    """Compiled templates on disk (`<cache root>/jinja`), keyed by jinja2 on each source's
    checksum: a new process skips compiling the macro-heavy templates again."""
    import jinja2

    from engine.gpu.adapter_cache import cache_root

    folder = cache_root() / "jinja"
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    return jinja2.FileSystemBytecodeCache(str(folder))


def render(template: str, **params) -> str:
    """Render the template with `params` (every variable must be given); the engine's
    templates come from the disk when rendered before (engine/gpu/wgsl_cache.py)."""
    return cached_render(template, params, lambda: _env().get_template(template).render(**params),
                         TEMPLATE_DIR)  # fmt: skip


def wgsl_float(value: float) -> str:
    """A float32 value as a WGSL literal that round-trips exactly."""
    return np.format_float_scientific(np.float32(value), unique=True, trim="0")


def activation_expr(name: str, var: str, attrs: dict | None = None) -> str:
    """The WGSL expression of unary op `name` (engine/model/elementwise.py) over the vec4<E>
    named `var`, its option fields (LEAKY_RELU's alpha, GELU's form) from `attrs`."""
    if name not in UNARY:
        raise ValueError(f"no WGSL expression for activation {name}")
    u = UNARY[name]
    fields = {
        k: v if isinstance(v, str) else wgsl_float(v) for k, v in u.fields(attrs or {}).items()
    }
    return u.wgsl.format(x=var, **fields)
