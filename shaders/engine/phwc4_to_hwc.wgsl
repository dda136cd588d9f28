{% include "common.wgsl" %}
// Download: PHWC4 slices -> a row-major [rows, W, C] float32 array.
{{ bindings.src }}
{{ bindings.raw }}

@compute @workgroup_size({{ workgroup_size[0] }})
// a 2-D grid of 64-wide groups: large tensors need more than 65535 groups along x
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  let i = gid.x + gid.y * {{ row_invocations }}u;  // element index in row-major order
  if (i >= {{ rows * w * c }}u) { return; }
  let c = i % {{ c }}u;
  let pix = i / {{ c }}u;
  raw[i] = f32(src[(c / 4u) * {{ rows * w }}u + pix][c % 4u]);
}
