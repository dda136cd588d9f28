{% import "epilogue.wgsl" as ep %}
{% import "phwc4_grid.wgsl" as grid %}
{% import "tensor.wgsl" as tensor %}
{% include "common.wgsl" %}
// Data movement as a gather: every output vec4 reads the input element(s) it
// comes from; an invocation writes BX neighbouring vec4 along x. Child
// templates (slice.wgsl, reshape.wgsl, depth_space.wgsl) fill the `map` block
// with `src_pos(o)`: output coordinate (b, h, w, c) -> (input vec4 index, lane).
// Modes (chosen in engine/gpu/kernels/shape.py):
// - copy:  same PHWC4 structure, dst[i] = src[i];
// - vec4:  the 4 lanes of an output vec4 are the 4 lanes of one input vec4;
// - lanes: one read per lane (channel structure changes).
// Padded lanes (c >= C) are written as 0, after the epilogue.

{{ bindings.src }}
{{ bindings.dst }}
{{ ep.declare(steps, bindings) }}

// Vec4 index and lane of input element (b, h, w, c).
fn src_index(p: vec4<u32>) -> vec2<u32> {
  return vec2<u32>(((p.w / 4u * {{ in_rows }}u + p.x * {{ in_h }}u + p.y) * {{ in_w }}u + p.z), p.w % 4u);
}

{% block map %}{% endblock %}

@compute @workgroup_size({{ workgroup_size[0] }})
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
{{ grid.decode(box) }}
  let x0 = x;
  for (var k = 0u; k < {{ box.bx }}u; k++) {
    let x = x0 + k;
{% if box.ragged %}
    if (x >= {{ box.x_end }}u) { break; }
{% endif %}
    let o = vec4<i32>(i32(b), i32(h), i32(x), i32(s * 4u));
{% if mode == "copy" %}
    var v = src[out_index + k];
{% elif mode == "vec4" %}
    var v = src[src_pos(o).x];
{% else %}
    var v = vec4<T>(0.0);
{% for l in range(4) %}
    if (s * 4u + {{ l }}u < {{ out_c }}u) {
      let p = src_pos(o + vec4<i32>(0, 0, 0, {{ l }}));
      v[{{ l }}] = src[p.x][p.y];
    }
{% endfor %}
{% endif %}
{{ ep.apply(steps) }}
{{ tensor.zero_padded_lanes(out_c) }}
    dst[out_index + k] = v;
  }
}
