{% include "common.wgsl" %}
// Upload: a row-major [rows, W, C] float32 array -> PHWC4 slices (zero padded).
{{ bindings.raw }}
{{ bindings.dst }}

@compute @workgroup_size({{ workgroup_size[0] }})
// a 2-D grid of 64-wide groups: large tensors need more than 65535 groups along x
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  let i = gid.x + gid.y * {{ row_invocations }}u;  // vec4 index in PHWC4 order: (s * ROWS + row) * W + x
  if (i >= {{ rows * w * s }}u) { return; }
  let pix = i % {{ rows * w }}u;
  let s = i / {{ rows * w }}u;
  var v = vec4<T>(0.0);
  for (var lane = 0u; lane < 4u; lane++) {
    let c = s * 4u + lane;
    if (c < {{ c }}u) { v[lane] = T(raw[pix * {{ c }}u + c]); }
  }
  dst[i] = v;
}
