{#
Shapes as run-time values (engine/gpu/kernels/params.py): the compact set's shared kernels
read them from the uniform G, so one pipeline serves layers of any shape.
#}

{# struct Params and its binding: `fields` is Params.fields, [(name, "i32" | "u32")]. #}
{% macro declare(fields, binding) -%}
struct Params {
{% for name, type in fields %}
  {{ name }}: {{ type }},
{% endfor %}
}
@group(0) @binding({{ binding }}) var<uniform> G: Params;
{%- endmacro %}

{# The entry point's header: one invocation per output, groups of `size` (the dispatch's
   workgroup_size, (GROUP, 1, 1)) in rows of at most 65535 (params.flat_grid); `i` is the
   invocation's output index. #}
{% macro main(size) -%}
@compute @workgroup_size({{ size | join(", ") }})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>,
        @builtin(local_invocation_index) li: u32) {
  let i = (wid.y * groups.x + wid.x) * {{ size[0] }}u + li;
{%- endmacro %}
