{% extends "gather.wgsl" %}
{% block map %}
// TILE (engine/gpu/kernels/tile.py): output (b, h, w, c) is input (b % B, h % H, w % W, c % C).
fn src_pos(o: vec4<i32>) -> vec2<u32> {
  let p = vec4<u32>(o);
  return src_index(vec4<u32>(p.x % {{ in_b }}u, p.y % {{ in_h }}u, p.z % {{ in_w }}u, p.w % {{ in_c }}u));
}
{% endblock %}
