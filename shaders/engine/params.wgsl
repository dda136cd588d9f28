{#
Shapes as run-time values (engine/gpu/kernels/params.py): the compact set's shared kernels
read them from the uniform G, so one pipeline serves layers of any shape.
#}

{# struct Params and its binding's declaration: `fields` is Params.fields, [(name, "i32" |
   "u32")], `declaration` the template's bindings.G. #}
{% macro declare(fields, declaration) -%}
struct Params {
{% for name, type in fields %}
  {{ name }}: {{ type }},
{% endfor %}
}
{{ declaration }}
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
