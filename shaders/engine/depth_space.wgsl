{% extends "gather.wgsl" %}
{% block map %}
// DEPTH_TO_SPACE / SPACE_TO_DEPTH, TFLite's DCR order (engine/reference/shape.py):
// d2s: out[n, h*B + i, w*B + j, c] = in[n, h, w, (i*B + j) * C_out + c]; s2d inverts it.
fn src_pos(o: vec4<i32>) -> vec2<u32> {
  let q = vec4<u32>(o);
{% if direction == "d2s" %}
  return src_index(vec4<u32>(
    q.x, q.y / {{ block }}u, q.z / {{ block }}u,
    ((q.y % {{ block }}u) * {{ block }}u + q.z % {{ block }}u) * {{ out_c }}u + q.w));
{% else %}
  let k = q.w / {{ in_c }}u;
  return src_index(vec4<u32>(
    q.x, q.y * {{ block }}u + k / {{ block }}u, q.z * {{ block }}u + k % {{ block }}u,
    q.w % {{ in_c }}u));
{% endif %}
}
{% endblock %}
