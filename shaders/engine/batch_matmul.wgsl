{% import "epilogue.wgsl" as ep %}
{% include "common.wgsl" %}
// BATCH_MATMUL (engine/gpu/kernels/batch_matmul.py): one invocation per output vec4,
// columns n = 4s..4s+3 of row m (an output pixel) of batch row (ob, oh); f32 sums.
// Operand element (row, w, c) is vec4 (c / 4) * ROWS * W + row * W + w, lane c % 4.

{{ bindings.dst }}
{{ bindings.xs }}
{{ bindings.ys }}
{{ ep.declare(steps, bindings) }}

const PLANE: u32 = {{ plane }}u;  // output vec4 per slice
const K: u32 = {{ k }}u;

fn x_at(slice: u32, row: u32, w: u32) -> vec4<f32> {
  return vec4<f32>(xs[(slice * {{ x.rows }}u + row) * {{ x.w }}u + w]);
}

fn y_at(slice: u32, row: u32, w: u32) -> vec4<f32> {
  return vec4<f32>(ys[(slice * {{ y.rows }}u + row) * {{ y.w }}u + w]);
}

@compute @workgroup_size({{ workgroup_size[0] }})
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  let p = gid.x;
  if (p >= PLANE) { return; }
  let s = gid.y;
  let row = p / {{ out_w }}u;
  let m = p % {{ out_w }}u;
  let ob = row / {{ out_h }}u;
  let oh = row % {{ out_h }}u;
  let xr = {{ x_row }};
  let yr = {{ y_row }};
  var acc = vec4<f32>(0.0);
  for (var k4 = 0u; k4 < {{ k4 }}u; k4++) {
{% if adj_x %}
    // x is [.., K, M]: x[m, k] is lane m % 4 of slice m / 4, pixel k.
    var a = vec4<f32>(0.0);
    for (var j = 0u; j < 4u; j++) {
      let k = k4 * 4u + j;
      if (k < K) { a[j] = x_at(m / 4u, xr, k)[m % 4u]; }
    }
{% else %}
    let a = x_at(k4, xr, m);  // lanes past K are the zero padding
{% endif %}
{% if adj_y %}
    // y is [.., N, K]: column n holds k4's 4 values in slice k4 of pixel n.
    var b = mat4x4<f32>();
    for (var i = 0u; i < 4u; i++) {
      let n = s * 4u + i;
      if (n < {{ n }}u) { b[i] = y_at(k4, yr, n); }
    }
    acc += a * b;  // row vector times matrix: acc[i] += dot(a, b[i])
{% else %}
    for (var j = 0u; j < 4u; j++) {
      let k = k4 * 4u + j;
      if (k < K) { acc += a[j] * y_at(s, yr, k); }
    }
{% endif %}
  }
  var v = acc;
  let x = m;
{{ ep.apply(steps) }}
  dst[s * PLANE + p] = vec4<T>(v);
}
