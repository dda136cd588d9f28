{% import "tensor.wgsl" as tensor %}
// Element-wise epilogue shared by every kernel that writes a tensor.
// Steps (from engine/gpu/kernels/epilogue.py): activation, add/mul of another
// tensor (residual, broadcast per channel or per element), PReLU slopes.
// Callers define `s` (output slice), `row` and `x` (u32) and `v` (vec4<E>, E from
// common.wgsl) before `apply`. An added
// operand with fewer channels (a folded channel PAD) is zero beyond its slices.
// Operands are buffers or textures (shaders/engine/tensor.wgsl).

{% macro declare(steps) %}
{% for st in steps if st.binding is not none %}
{{ tensor.declare(st.tensor) }}
{% endfor %}
{% endmacro %}

{% macro operand(st) %}{{ tensor.load(st.tensor, st.index, st.x, st.row, "s", "E") }}{% endmacro %}

{% macro apply(steps) %}
{% for st in steps %}
{% if st.kind == "act" %}
    v = {{ st.expr }};
{% elif st.kind == "add" and st.guard %}
    if (s < {{ st.guard }}u) { v = v + {{ operand(st) }}; }
{% elif st.kind == "add" %}
    v = v + {{ operand(st) }};
{% elif st.kind == "mul" %}
    v = v * {{ operand(st) }};
{% elif st.kind == "prelu" %}
    v = max(v, vec4<E>(0.0)) + {{ operand(st) }} * min(v, vec4<E>(0.0));
{% elif st.kind == "mask" %}
    if (s == {{ st.last }}u) { v = v * vec4<E>({{ st.keep }}); }
{% endif %}
{% endfor %}
{% endmacro %}
