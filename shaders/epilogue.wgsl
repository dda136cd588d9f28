// Element-wise epilogue shared by every kernel that writes a tensor.
// Steps (from engine/gpu/kernels/epilogue.py): activation, add/mul of another
// tensor (residual, broadcast per channel or per element), PReLU slopes.
// Callers define `s` (output slice), `row` and `x` before `apply`. An added
// operand with fewer channels (a folded channel PAD) is zero beyond its slices.

{% macro declare(steps) %}
{% for st in steps if st.binding is not none %}
@group(0) @binding({{ st.binding }}) var<storage, read> {{ st.name }}: array<vec4<T>>;
{% endfor %}
{% endmacro %}

{% macro apply(steps) %}
{% for st in steps %}
{% if st.kind == "act" %}
    v = {{ st.expr }};
{% elif st.kind == "add" and st.guard %}
    if (s < {{ st.guard }}u) { v = v + {{ st.name }}[{{ st.index }}]; }
{% elif st.kind == "add" %}
    v = v + {{ st.name }}[{{ st.index }}];
{% elif st.kind == "mul" %}
    v = v * {{ st.name }}[{{ st.index }}];
{% elif st.kind == "prelu" %}
    v = max(v, vec4<T>(0.0)) + {{ st.name }}[{{ st.index }}] * min(v, vec4<T>(0.0));
{% elif st.kind == "mask" %}
    if (s == {{ st.last }}u) { v = v * vec4<T>({{ st.keep }}); }
{% endif %}
{% endfor %}
{% endmacro %}
