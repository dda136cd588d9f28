{% extends "gather.wgsl" %}
{% block map %}
// RESHAPE: the row-major flat index of output (b, h, w, c) names the input
// element; its pixel (row * W + x) is flat / C_in, its channel flat % C_in.
fn src_pos(o: vec4<i32>) -> vec2<u32> {
  let q = vec4<u32>(o);
  let flat = ((q.x * {{ out_h }}u + q.y) * {{ out_w }}u + q.z) * {{ out_c }}u + q.w;
  let c = flat % {{ in_c }}u;
  return vec2<u32>(c / 4u * {{ in_pixels }}u + flat / {{ in_c }}u, c % 4u);
}
{% endblock %}
