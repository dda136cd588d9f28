{#
PHWC4 tensor access for both storage kinds (engine/gpu/kernels/base.py `tensor_arg`):
one kernel template serves buffers and textures.

A tensor argument `t` has: name, kind ("buffer" | "texture"), tiles, and its binding
(declared from the kernel's Binding: base.py `tensor_binding`, placed by the template as
`{{ bindings.<name> }}`).
- buffer:  array<vec4<T>>; vec4 (s, row, x) sits at (s * ROWS + row) * W + x;
- texture: a 2-D array, layer s, texel (x, row) (rows = B*H); read with textureLoad
  from a sampled texture_2d_array<f32>, written with textureStore to a write-only
  storage texture (values are vec4<f32> at both precisions).
Callers pass both addressings: `index`, the flat buffer index (any u32 expression the
kernel already has, often with hoisted partial sums), and `x`, `row`, `s` (u32
expressions) for textures. Only the one the kind needs is emitted.
A texture tensor folded by the memory plan (`t.tiles` = (across, down, W, ROWS), see
engine/gpu/kernels/base.py BuildContext.texture_tiles) keeps `across` x `down` slices
side by side in each layer of its view: slice s at texel
(x + W * (s % across), row + ROWS * (s / across % down)), layer s / (across * down).
A texture argument with `param` (the compact set's shared kernels, engine/gpu/kernels/
params.py) reads those four numbers from the uniform G: one shader serves any folding.
#}

{# `vec2<u32>(texel), layer` of element (x, row, s) of texture tensor `t`. #}
{% macro texel(t, x, row, s) -%}
{% if t.get("param") -%}
{% set g = "G." ~ t.name -%}
vec2<u32>(({{ x }}) + {{ g }}_tw * (({{ s }}) % {{ g }}_across), ({{ row }}) + {{ g }}_th * (({{ s }}) / {{ g }}_across % {{ g }}_down)), ({{ s }}) / ({{ g }}_across * {{ g }}_down)
{%- elif not t.tiles -%}
vec2<u32>({{ x }}, {{ row }}), {{ s }}
{%- else -%}
{% set across, down, w, rows = t.tiles -%}
{% set tx = "(" ~ x ~ ") + " ~ w ~ "u * ((" ~ s ~ ") % " ~ across ~ "u)" if across > 1 else x -%}
{% set per = "(" ~ s ~ ")" if across == 1 else "(" ~ s ~ ") / " ~ across ~ "u" -%}
{% set ty = "(" ~ row ~ ") + " ~ rows ~ "u * (" ~ per ~ " % " ~ down ~ "u)" if down > 1 else row -%}
vec2<u32>({{ tx }}, {{ ty }}), ({{ s }}) / {{ across * down }}u
{%- endif %}
{%- endmacro %}

{# A vec4<type> expression (type "T": the storage type; "A"/"f32": converted). #}
{% macro load(t, index, x, row, s, type="T") -%}
{% if t.kind == "texture" -%}
vec4<{{ type }}>(textureLoad({{ t.name }}, {{ texel(t, x, row, s) }}, 0))
{%- elif type == "T" -%}
{{ t.name }}[{{ index }}]
{%- else -%}
vec4<{{ type }}>({{ t.name }}[{{ index }}])
{%- endif %}
{%- endmacro %}

{# The constants of an input and output geometry (engine/gpu/kernels/common.py
   `geometry`), shared by the windowed kernels. #}
{% macro geometry(in_w, in_h, in_plane, out_w, out_h, out_rows) -%}
const IN_W: i32 = {{ in_w }};
const IN_H: i32 = {{ in_h }};
const IN_PLANE: u32 = {{ in_plane }}u;  // vec4 per source slice
const OUT_W: u32 = {{ out_w }}u;
const OUT_H: u32 = {{ out_h }}u;
const OUT_ROWS: u32 = {{ out_rows }}u;
{%- endmacro %}

{# A statement storing the vec4<T> `value`. #}
{% macro store(t, index, x, row, s, value) -%}
{% if t.kind == "texture" -%}
textureStore({{ t.name }}, {{ texel(t, x, row, s) }}, vec4<f32>({{ value }}));
{%- else -%}
{{ t.name }}[{{ index }}] = {{ value }};
{%- endif %}
{%- endmacro %}

{# A statement zeroing the lanes of `v` (slice `s`) past channel count `c`: padded
   lanes of the last slice are 0. Nothing when c % 4 == 0. #}
{% macro zero_padded_lanes(c) -%}
{% if c % 4 %}
    v = select(vec4<E>(0.0), v, vec4<u32>(s * 4u) + vec4<u32>(0u, 1u, 2u, 3u) < vec4<u32>({{ c }}u));
{%- endif %}
{%- endmacro %}
