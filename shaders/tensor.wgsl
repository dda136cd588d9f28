{#
PHWC4 tensor access for both storage kinds (engine/gpu/kernels/base.py `tensor_arg`):
one kernel template serves buffers and textures.

A tensor argument `t` has: name, binding, kind ("buffer" | "texture"),
access ("read" | "write"), format (rgba32float | rgba16float).
- buffer:  array<vec4<T>>; vec4 (s, row, x) sits at (s * ROWS + row) * W + x;
- texture: a 2-D array, layer s, texel (x, row) (rows = B*H); read with textureLoad
  from a sampled texture_2d_array<f32>, written with textureStore to a write-only
  storage texture (values are vec4<f32> at both precisions).
Callers pass both addressings: `index`, the flat buffer index (any u32 expression the
kernel already has, often with hoisted partial sums), and `x`, `row`, `s` (u32
expressions) for textures. Only the one the kind needs is emitted.
#}

{% macro declare(t) -%}
@group(0) @binding({{ t.binding }}) {% if t.kind == "texture" and t.access == "read" -%}
var {{ t.name }}: texture_2d_array<f32>;
{%- elif t.kind == "texture" -%}
var {{ t.name }}: texture_storage_2d_array<{{ t.format }}, write>;
{%- elif t.access == "read" -%}
var<storage, read> {{ t.name }}: array<vec4<T>>;
{%- else -%}
var<storage, read_write> {{ t.name }}: array<vec4<T>>;
{%- endif %}
{%- endmacro %}

{# A vec4<type> expression (type "T": the storage type; "A"/"f32": converted). #}
{% macro load(t, index, x, row, s, type="T") -%}
{% if t.kind == "texture" -%}
vec4<{{ type }}>(textureLoad({{ t.name }}, vec2<u32>({{ x }}, {{ row }}), {{ s }}, 0))
{%- elif type == "T" -%}
{{ t.name }}[{{ index }}]
{%- else -%}
vec4<{{ type }}>({{ t.name }}[{{ index }}])
{%- endif %}
{%- endmacro %}

{# A statement storing the vec4<T> `value`. #}
{% macro store(t, index, x, row, s, value) -%}
{% if t.kind == "texture" -%}
textureStore({{ t.name }}, vec2<u32>({{ x }}, {{ row }}), {{ s }}, vec4<f32>({{ value }}));
{%- else -%}
{{ t.name }}[{{ index }}] = {{ value }};
{%- endif %}
{%- endmacro %}
