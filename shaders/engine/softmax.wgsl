{% import "epilogue.wgsl" as ep %}
{% include "common.wgsl" %}
// Softmax over the channels of each pixel: max, f32 sum of exp((x - max) * beta),
// normalised write. Padded lanes (c >= C) are left out and written 0.

{{ bindings.src }}
{{ bindings.dst }}
{{ ep.declare(steps, bindings) }}

const PLANE: u32 = {{ plane }}u;
const S: u32 = {{ slices }}u;
const BETA: f32 = {{ beta }};

// Lanes of slice s that hold channels.
fn valid(s: u32) -> vec4<bool> {
{% if mask %}
  if (s == S - 1u) { return {{ mask }}; }
{% endif %}
  return vec4<bool>(true);
}

@compute @workgroup_size({{ workgroup_size[0] }})
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  let p = gid.x;
  if (p >= PLANE) { return; }
  let row = p / {{ w }}u;
  let x = p % {{ w }}u;
  var m = vec4<f32>(-3.40282347e+38);
  for (var s = 0u; s < S; s++) {
    m = max(m, select(vec4<f32>(-3.40282347e+38), vec4<f32>(src[s * PLANE + p]), valid(s)));
  }
  let mx = max(max(m.x, m.y), max(m.z, m.w));
  var sum = vec4<f32>(0.0);
  for (var s = 0u; s < S; s++) {
    let e = exp((vec4<f32>(src[s * PLANE + p]) - vec4<f32>(mx)) * BETA);
    sum += select(vec4<f32>(0.0), e, valid(s));
  }
  let inv = 1.0 / (sum.x + sum.y + sum.z + sum.w);
  for (var s = 0u; s < S; s++) {
    let e = exp((vec4<f32>(src[s * PLANE + p]) - vec4<f32>(mx)) * BETA) * inv;
    var v = select(vec4<f32>(0.0), e, valid(s));
{{ ep.apply(steps) }}
{% if mask %}
    if (s == S - 1u) { v = select(vec4<E>(0.0), v, {{ mask }}); }
{% endif %}
    dst[s * PLANE + p] = vec4<T>(v);
  }
}
