{% extends "gather.wgsl" %}
{% block map %}
// SLICE, STRIDED_SLICE, SPLIT, TRANSPOSE: the input coordinate is affine in the
// output one, p = BEGIN + M * o (M: strides, a permutation, zeros for new axes).
fn src_pos(o: vec4<i32>) -> vec2<u32> {
  return src_index(vec4<u32>(
{% for a in range(4) %}
    u32({{ begin[a] }}{% for k in range(4) if m[a][k] != 0 %} + {{ m[a][k] }} * o.{{ "xyzw"[k] }}{% endfor %}){{ "," if not loop.last }}
{% endfor %}
  ));
}
{% endblock %}
