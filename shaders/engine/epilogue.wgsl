{% import "tensor.wgsl" as tensor %}
// Element-wise epilogue shared by every kernel that writes a tensor.
// Steps (from engine/gpu/kernels/epilogue.py): activation, add/mul of another
// tensor (residual, broadcast per channel or per element), add of a 2x2 max pool of
// a tensor twice the size (add_pool2: a folded MAX_POOL_2D), PReLU slopes, fake
// quantization onto an int8/uint8 grid (`quant`, also used by shaders/engine/quantize.wgsl).
// Callers define `s` (output slice), `row` and `x` (u32) and `v` (vec4<E>, E from
// common.wgsl) before `apply`. An added
// operand with fewer channels (a folded channel PAD) is zero beyond its slices.
// Operands are buffers or textures (shaders/engine/tensor.wgsl).

{# The operands' declarations: `bindings` is the template's (base.py Dispatch.source). #}
{% macro declare(steps, bindings) %}
{% for st in steps if st.binding is not none %}
{{ bindings[st.binding] }}
{% endfor %}
{% endmacro %}

{% macro operand(st) %}{{ tensor.load(st.tensor, st.index, st.x, st.row, "s", "E") }}{% endmacro %}
{% macro tap(st, t) %}{{ tensor.load(st.tensor, t.index, t.x, t.row, "s", "E") }}{% endmacro %}

{# v rounded to the grid (scale, zero, lo, hi) of a fake-quant step, in f32: halves go
   away from zero as in TFLite's rounding; padded lanes (0) stay 0. #}
{% macro quant(st) -%}
    {
      let q = vec4<f32>(v) / {{ st.scale }};
      let level = clamp(sign(q) * floor(abs(q) + vec4<f32>(0.5)) + vec4<f32>({{ st.zero }}),
                        vec4<f32>({{ st.lo }}), vec4<f32>({{ st.hi }}));
      v = vec4<E>((level - vec4<f32>({{ st.zero }})) * {{ st.scale }});
    }
{%- endmacro %}

{% macro apply(steps) %}
{% for st in steps %}
{% if st.kind == "act" %}
    v = {{ st.expr }};
{% elif st.kind == "add_pool2" %}
    {% if st.guard %}if (s < {{ st.guard }}) {% endif %}{
      v = v + max(max({{ tap(st, st.taps[0]) }}, {{ tap(st, st.taps[1]) }}),
                  max({{ tap(st, st.taps[2]) }}, {{ tap(st, st.taps[3]) }}));
    }
{% elif st.kind == "add" and st.guard %}
    if (s < {{ st.guard }}) { v = v + {{ operand(st) }}; }
{% elif st.kind == "add" %}
    v = v + {{ operand(st) }};
{% elif st.kind == "mul" %}
    v = v * {{ operand(st) }};
{% elif st.kind == "prelu" %}
    v = max(v, vec4<E>(0.0)) + {{ operand(st) }} * min(v, vec4<E>(0.0));
{% elif st.kind == "quant" %}
{{ quant(st) }}
{% elif st.kind == "mask" %}
    if (s == {{ st.last }}u) { v = v * vec4<E>({{ st.keep }}); }
{% endif %}
{% endfor %}
{% endmacro %}
