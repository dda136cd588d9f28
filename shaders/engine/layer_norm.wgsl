{% import "epilogue.wgsl" as ep %}
{% include "common.wgsl" %}
// LAYER_NORM over the channels of each pixel (engine/gpu/kernels/layer_norm.py):
// f32 mean, f32 variance of the deviations (padded lanes left out), then
// (x - mean) * rsqrt(var + eps) * gamma + beta; gamma/beta are zero padded.

{{ bindings.src }}
{{ bindings.dst }}
{{ bindings.gamma }}
{{ bindings.beta }}
{{ ep.declare(steps, bindings) }}

const PLANE: u32 = {{ plane }}u;
const S: u32 = {{ slices }}u;

// Lanes of slice s that hold channels, as 1.0 / 0.0.
fn valid(s: u32) -> vec4<f32> {
{% if mask %}
  if (s == S - 1u) { return select(vec4<f32>(0.0), vec4<f32>(1.0), {{ mask }}); }
{% endif %}
  return vec4<f32>(1.0);
}

@compute @workgroup_size({{ workgroup_size[0] }})
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  let p = gid.x;
  if (p >= PLANE) { return; }
  let row = p / {{ w }}u;
  let x = p % {{ w }}u;
  var sum = vec4<f32>(0.0);
  for (var s = 0u; s < S; s++) { sum += vec4<f32>(src[s * PLANE + p]); }
  let mean = (sum.x + sum.y + sum.z + sum.w) / {{ channels }}.0;
  var sq = vec4<f32>(0.0);
  for (var s = 0u; s < S; s++) {
    let d = (vec4<f32>(src[s * PLANE + p]) - vec4<f32>(mean)) * valid(s);
    sq += d * d;
  }
  let r = inverseSqrt((sq.x + sq.y + sq.z + sq.w) / {{ channels }}.0 + {{ epsilon }});
  for (var s = 0u; s < S; s++) {
    let d = vec4<f32>(src[s * PLANE + p]) - vec4<f32>(mean);
    var v = d * r * gamma[s] + beta[s];
{{ ep.apply(steps) }}
{% if mask %}
    if (s == S - 1u) { v = select(vec4<E>(0.0), v, {{ mask }}); }
{% endif %}
    dst[s * PLANE + p] = vec4<T>(v);
  }
}
