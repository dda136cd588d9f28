"""WGSL from templates: jinja2 over shaders/, StrictUndefined so a missing
variable is an error. The rendered source is the pipeline cache key: same
source, same pipeline."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import jinja2

SHADER_DIR = Path(__file__).resolve().parent.parent.parent / "shaders"

# Fused activations as WGSL expressions over a vec4 `v` (TFLite semantics).
# Stable forms: exp of a clamped argument, tanh through exp(-2|x|), so large
# inputs give +-1 / 0 / 1 instead of NaN on drivers whose tanh/exp overflow.
ACTIVATIONS = {
    "NONE": "v",
    "RELU": "max(v, vec4<T>(0.0))",
    "RELU6": "clamp(v, vec4<T>(0.0), vec4<T>(6.0))",
    "RELU_N1_TO_1": "clamp(v, vec4<T>(-1.0), vec4<T>(1.0))",
    "TANH": "stable_tanh(v)",
    "LOGISTIC": "sigmoid(v)",
    "HARD_SWISH": "v * clamp(v + vec4<T>(3.0), vec4<T>(0.0), vec4<T>(6.0)) * vec4<T>(1.0 / 6.0)",
}


@cache
def _env() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(SHADER_DIR)),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )


def render(template: str, **params) -> str:
    """Render shaders/<template> with `params` (every variable must be given)."""
    return _env().get_template(template).render(**params)


def activation_expr(name: str) -> str:
    if name not in ACTIVATIONS:
        raise ValueError(f"no GPU epilogue for activation {name}")
    return ACTIVATIONS[name]
