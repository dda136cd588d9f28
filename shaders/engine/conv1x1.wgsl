{% import "epilogue.wgsl" as ep %}
{% import "weights.wgsl" as weights %}
{% import "tensor.wgsl" as tensor %}
{% include "common.wgsl" %}
// 1x1 convolution (stride 1, no padding) as a matmul over PHWC4 slices
// (engine/gpu/kernels/conv1x1.py): out[so][p] = bias[so] + sum_si src[si][p] * W[so][si].
// One invocation: BP consecutive pixels (of the flattened rows*W) x BS output slices.
// Weights: one mat4x4 per (dst slice, src slice), column j = output lane j.
// quad: the 4 invocations of a quad (one row of pixels, the same slices, when the group
// is 4k wide and quads are consecutive local indices) each load one column and
// quadBroadcast shares them: a quarter of the loads where the driver cannot tell that
// the index is the same in every lane.

// Input and output: buffers or textures (shaders/engine/tensor.wgsl).
{{ bindings.src }}
{{ bindings.dst }}
{{ weights.declare(bindings, dst_slices, shared, 0) }}
{% if scale is not none %}
// A fused squeeze-excite gate: the input is scaled per channel before the matmul.
{{ bindings.in_scale }}
{% endif %}
{{ ep.declare(steps, bindings) }}

const P: u32 = {{ pixels }}u;  // pixels per slice (rows * W), input and output
const OUT_W: u32 = {{ out_w }}u;
const SRC_S: u32 = {{ src_slices }}u;

@compute @workgroup_size({{ workgroup_size | join(", ") }})
{% if quad %}
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(local_invocation_index) li: u32) {
{% else %}
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
{% endif %}
  let p0 = gid.x * {{ bp }}u;
  let ls0 = gid.z * {{ bs }}u;  // first slice within this dispatch's weights
  let base = first_slice();
  let count = slice_count();
{% if quad %}
  // A quad returns whole (ls0 is the same in its 4 invocations); past the last pixel
  // it stays: every invocation of a quad takes part in the broadcasts (indices are
  // clamped below; the stores check bounds). Assumes a quad is 4 consecutive local
  // indices (WGSL does not promise it; subgroup_invocation_id needs a 1-D group), as
  // on SwiftShader and lavapipe: tiles.QUAD_WEIGHTS lists only classes checked so.
  if (ls0 >= count) { return; }
  let column = li % 4u;
{% else %}
  if (p0 >= P || ls0 >= count) { return; }
{% endif %}
{% for j in range(bs) %}
  let sl{{ j }} = min(ls0 + {{ j }}u, {{ dst_slices - 1 }}u);
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
  for (var si = 0u; si < SRC_S; si++) {
{% if scale is not none %}
    let g = {{ tensor.load(scale, "si", "0u", "0u", "si", "A") }};
{% endif %}
{% for k in range(bp) %}
    let x{{ k }} = {{ tensor.load(src, "si * P + q" ~ k, "qx" ~ k, "qy" ~ k, "si", "A") }}{% if scale is not none %} * g{% endif %};
{% endfor %}
{% for j in range(bs) %}
    {
{% if quad %}
      let wq = weights[sl{{ j }} * SRC_S + si][column];
      let w = mat4x4<A>(quadBroadcast(wq, 0u), quadBroadcast(wq, 1u), quadBroadcast(wq, 2u), quadBroadcast(wq, 3u));
{% else %}
      let w = weights[sl{{ j }} * SRC_S + si];
{% endif %}
{% for k in range(bp) %}
      a{{ j }}_{{ k }} += x{{ k }} * w;
{% endfor %}
    }
{% endfor %}
  }
{% for j in range(bs) %}
  if (ls0 + {{ j }}u < count) {
    let s = base + ls0 + {{ j }}u;
    let b = bias[sl{{ j }}];
{% for k in range(bp) %}
    if (p0 + {{ k }}u < P) {
      let p = p0 + {{ k }}u;
      let row = p / OUT_W;
      let x = p % OUT_W;
      var v = a{{ j }}_{{ k }} + b;
{{ ep.apply(steps) }}
      {{ tensor.store(dst, "s * P + p", "x", "row", "s", "vec4<T>(v)") }}
    }
{% endfor %}
  }
{% endfor %}
}
