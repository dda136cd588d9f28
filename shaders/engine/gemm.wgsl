{% import "epilogue.wgsl" as ep %}
{% import "tensor.wgsl" as tensor %}
{% include "common.wgsl" %}
{% set wg = workgroup_size[0] %}
// 1x1 convolution as a tiled GEMM over PHWC4 slices (engine/gpu/kernels/gemm.py):
// out[so][p] = bias[so] + sum_si src[si][p] * W[so][si]  (W: mat4x4, column j = lane j).
// A work group: WG invocations x BP consecutive pixels x BS output slices, the same for
// the whole group
// (workgroup_id.y), so every weight read has one address for all invocations: drivers
// load it once and broadcast it (Mesa's divergence analysis, SwiftShader's equal-offset
// loads) instead of gathering per invocation.
{% if dims %}
// Shared pipeline: the geometry (pixels, width, source and output slices) comes from a
// small uniform and the weights from storage arrays, so every 1x1 layer with the same
// tile, storage kinds and epilogue shape runs one pipeline (set-up time).
{% endif %}
{% if shared_k %}
// The group's weights for a chunk of SHARED_K source slices are staged in workgroup
// memory (one mat4 per invocation per step), then read from there by every invocation.
{% endif %}

{{ bindings.src }}
{{ bindings.dst }}
alias A = f32;
{{ bindings.weights }}
{{ bindings.bias }}
{% if dims %}
{{ bindings.dims }}  // P, OUT_W, SRC_S, DST_S
{% endif %}
{% if scale is not none %}
// A fused squeeze-excite gate: the input is scaled per channel before the matmul.
{{ bindings.in_scale }}
{% endif %}
{{ ep.declare(steps, bindings) }}

{% if not dims %}
const P: u32 = {{ pixels }}u;  // pixels per slice (rows * W), input and output
const OUT_W: u32 = {{ out_w }}u;
const SRC_S: u32 = {{ src_slices }}u;
const DST_S: u32 = {{ dst_slices }}u;
{% endif %}
const WG: u32 = {{ wg }}u;
{% if shared_k %}
const SHARED_K: u32 = {{ shared_k }}u;
var<workgroup> tile: array<mat4x4<A>, {{ shared_k * bs }}>;
{% endif %}

@compute @workgroup_size({{ wg }}, 1, 1)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
{% if dims %}
  let P = u32(dims.x);
  let OUT_W = u32(dims.y);
  let SRC_S = u32(dims.z);
  let DST_S = u32(dims.w);
{% endif %}
  let p0 = (wid.x * WG + lid.x) * {{ bp }}u;  // BP consecutive pixels per invocation
  let s0 = wid.y * {{ bs }}u;  // first output slice: uniform over the group
{% for j in range(bs) %}
  let w{{ j }} = min(s0 + {{ j }}u, DST_S - 1u) * SRC_S;
{% for k in range(bp) %}
  var a{{ j }}_{{ k }} = vec4<A>(0.0);
{% endfor %}
{% endfor %}
{% for k in range(bp) %}
  let q{{ k }} = min(p0 + {{ k }}u, P - 1u);
{% if src.kind == "texture" %}
  let qx{{ k }} = q{{ k }} % OUT_W;
  let qy{{ k }} = q{{ k }} / OUT_W;
{% endif %}
{% endfor %}
{% if shared_k %}
  for (var k0 = 0u; k0 < SRC_S; k0 += SHARED_K) {
    workgroupBarrier();
    for (var i = lid.x; i < SHARED_K * {{ bs }}u; i += WG) {
      let j = i / SHARED_K;
      let si = min(k0 + i % SHARED_K, SRC_S - 1u);
      tile[i] = weights[min(s0 + j, DST_S - 1u) * SRC_S + si];
    }
    workgroupBarrier();
    for (var kk = 0u; kk < min(SHARED_K, SRC_S - k0); kk++) {
      let si = k0 + kk;
{% else %}
  {
    for (var si = 0u; si < SRC_S; si++) {
{% endif %}
{% if scale is not none %}
      let g = {{ tensor.load(scale, "si", "0u", "0u", "si", "A") }};
{% endif %}
{% for k in range(bp) %}
      let x{{ k }} = {{ tensor.load(src, "si * P + q" ~ k, "qx" ~ k, "qy" ~ k, "si", "A") }}{% if scale is not none %} * g{% endif %};
{% endfor %}
{% for j in range(bs) %}
      {
{% if shared_k %}
        let w = tile[{{ j }}u * SHARED_K + kk];
{% else %}
        let w = weights[w{{ j }} + si];
{% endif %}
{% for k in range(bp) %}
        a{{ j }}_{{ k }} += x{{ k }} * w;
{% endfor %}
      }
{% endfor %}
    }
  }
{% for j in range(bs) %}
  if (s0 + {{ j }}u < DST_S) {
    let s = s0 + {{ j }}u;
    let b = bias[s];
{% for k in range(bp) %}
    {
      let p = p0 + {{ k }}u;
      if (p < P) {
        let row = p / OUT_W;
        let x = p % OUT_W;
        var v = vec4<T>(a{{ j }}_{{ k }} + b);
{{ ep.apply(steps) }}
        {{ tensor.store(dst, "s * P + p", "x", "row", "s", "v") }}
      }
    }
{% endfor %}
  }
{% endfor %}
}
