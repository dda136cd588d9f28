{% import "epilogue.wgsl" as ep %}
{% import "weights.wgsl" as weights %}
{% include "common.wgsl" %}
// FULLY_CONNECTED over PHWC4 buffers (engine/gpu/kernels/fully_connected.py):
// y[n][o] = bias[o] + sum_i x[n][i] * W[o][i], x the input flattened to [N, I].
// One work group: one output slice of one batch row; its SPLIT invocations each sum every
// SPLIT-th source slice, then a tree reduction in work group memory adds the partial sums.
// Weights: one mat4x4 per (dst slice, src slice), column j = output lane j.

{{ bindings.src }}
{{ bindings.dst }}
{{ weights.declare(bindings, dst_slices, False, 0) }}
{{ ep.declare(steps, bindings) }}

const SRC_S: u32 = {{ src_slices }}u;
const N: u32 = {{ batch }}u;  // batch rows = output pixels
const OUT_W: u32 = {{ out_w }}u;
const SPLIT: u32 = {{ split }}u;

var<workgroup> part: array<vec4<A>, {{ split }}>;

// Input features 4*si .. 4*si+3 of batch row n.
fn load(si: u32, n: u32) -> vec4<A> {
{% if gather %}
  // the input's channel count C differs from I: flat index n*I + i -> (pixel, channel)
  var r = vec4<A>(0.0);
  for (var j = 0u; j < 4u; j++) {
    let i = si * 4u + j;
    if (i < {{ in_features }}u) {
      let f = n * {{ in_features }}u + i;
      let pix = f / {{ in_c }}u;
      let c = f % {{ in_c }}u;
      r[j] = A(src[(c / 4u) * {{ in_pixels }}u + pix][c % 4u]);
    }
  }
  return r;
{% else %}
  return vec4<A>(src[si * N + n]);
{% endif %}
}

@compute @workgroup_size({{ workgroup_size | join(", ") }})
fn main(
  @builtin(workgroup_id) wid: vec3<u32>,
  @builtin(local_invocation_index) lid: u32,
) {
  let ls = wid.x;  // output slice
  let n = wid.y;
  var acc = vec4<A>(0.0);
  for (var si = lid; si < SRC_S; si += SPLIT) {
    acc += load(si, n) * weights[ls * SRC_S + si];
  }
  part[lid] = acc;
  workgroupBarrier();
{% for step in reduce_steps %}
  if (lid < {{ step }}u) { part[lid] += part[lid + {{ step }}u]; }
  workgroupBarrier();
{% endfor %}
  if (lid == 0u) {
    let s = ls;
    let row = n / OUT_W;
    let x = n % OUT_W;
    var v = part[0] + bias[ls];
{{ ep.apply(steps) }}
    dst[s * N + n] = vec4<T>(v);
  }
}
