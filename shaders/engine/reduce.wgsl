{% import "epilogue.wgsl" as ep %}
{% import "tensor.wgsl" as tensor %}
{% include "common.wgsl" %}
// MEAN / SUM over any axes (engine/gpu/kernels/reduce.py): one invocation per output
// vec4 (ob, oh, ow, slice s); the input coordinate of each (B, H, W, C) axis is a loop
// variable r<axis> (reduced), 0 (padding) or an output coordinate (kept). f32 sums.

{{ bindings.src }}
{{ bindings.dst }}
{{ ep.declare(steps, bindings) }}

const PLANE: u32 = {{ plane }}u;

fn load_src(slice: u32, b: u32, h: u32, w: u32) -> vec4<f32> {
  let row = b * {{ in_h }}u + h;
  return {{ tensor.load(src, "(slice * " ~ in_rows ~ "u + row) * " ~ in_w ~ "u + w", "w", "row", "slice", "f32") }};
}

@compute @workgroup_size({{ workgroup_size[0] }})
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  let p = gid.x;
  if (p >= PLANE) { return; }
  let s = gid.y;
  let row = p / {{ out_w }}u;
  let ow = p % {{ out_w }}u;
  let ob = row / {{ out_h }}u;
  let oh = row % {{ out_h }}u;
{% macro open_loops() %}
{% for a, n in loops %}
  for (var r{{ a }} = 0u; r{{ a }} < {{ n }}u; r{{ a }}++) {
{% endfor %}
{% endmacro %}
{% macro close_loops() %}
{% for a, n in loops %}
  }
{% endfor %}
{% endmacro %}
{% if channels_reduced %}
  // Each output lane is its own input pixel; its channels are summed slice by slice.
  var acc = vec4<f32>(0.0);
  for (var lane = 0u; lane < 4u; lane++) {
    let oc = s * 4u + lane;
    if (oc >= {{ out_c }}u) { break; }
    var sum = 0.0;
{{ open_loops() }}
    for (var r3 = 0u; r3 < {{ in_s }}u; r3++) {
      sum += dot(load_src(r3, {{ b }}, {{ h }}, {{ w }}), vec4<f32>(1.0));
    }
{{ close_loops() }}
    acc[lane] = sum;
  }
{% else %}
  // Channels kept: lanes of each input vec4 line up with the output's.
  let oc = s * 4u;
  var acc = vec4<f32>(0.0);
{{ open_loops() }}
  acc += load_src(s, {{ b }}, {{ h }}, {{ w }});
{{ close_loops() }}
{% endif %}
  var v = acc * {{ scale }};
  let x = ow;
{{ ep.apply(steps) }}
  {{ tensor.store(dst, "s * PLANE + p", "ow", "row", "s", "vec4<T>(v)") }}
}
