{% import "epilogue.wgsl" as ep %}
{% include "common.wgsl" %}
// Generic 2-D convolution over PHWC4 buffers.
// One invocation: BX neighbouring output pixels of one row, one output slice.
// Weights: one mat4x4 per (dst slice, ky, kx, src slice); column j holds the
// weights of output lane j, so `src * w` gives the four output lanes.

@group(0) @binding(0) var<storage, read> src: array<vec4<T>>;
@group(0) @binding(1) var<storage, read_write> dst: array<vec4<T>>;
@group(0) @binding(2) var<{{ weight_space }}> weights: array<mat4x4<T>, {{ weight_count }}>;
@group(0) @binding(3) var<{{ weight_space }}> bias: array<vec4<T>, {{ dst_slices }}>;
{{ ep.declare(steps) }}

const IN_W: i32 = {{ in_w }};
const IN_H: i32 = {{ in_h }};
const IN_ROWS: u32 = {{ in_rows }}u;
const SRC_S: u32 = {{ src_slices }}u;
const OUT_W: u32 = {{ out_w }}u;
const OUT_H: u32 = {{ out_h }}u;
const OUT_ROWS: u32 = {{ out_rows }}u;
const BX: u32 = {{ bx }}u;

@compute @workgroup_size({{ wg[0] }}, {{ wg[1] }}, {{ wg[2] }})
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  let x0 = gid.x * BX;
  let row = gid.y;
  let ls = gid.z;  // slice within this dispatch's weights
  if (x0 >= OUT_W || row >= OUT_ROWS || ls >= {{ dst_slices }}u) { return; }
  let batch = row / OUT_H;
  let oy = i32(row % OUT_H);
  var acc: array<vec4<T>, {{ bx }}>;
  for (var i = 0u; i < BX; i++) { acc[i] = bias[ls]; }
  for (var ky = 0; ky < {{ kh }}; ky++) {
    let iy = oy * {{ stride_h }} - {{ pad_top }} + ky * {{ dil_h }};
    if (iy < 0 || iy >= IN_H) { continue; }
    let in_row = batch * u32(IN_H) + u32(iy);
    for (var kx = 0; kx < {{ kw }}; kx++) {
      let wbase = ((ls * {{ kh }}u + u32(ky)) * {{ kw }}u + u32(kx)) * SRC_S;
      for (var i = 0u; i < BX; i++) {
        let ix = i32(x0 + i) * {{ stride_w }} - {{ pad_left }} + kx * {{ dil_w }};
        if (ix < 0 || ix >= IN_W || x0 + i >= OUT_W) { continue; }
        var p = in_row * u32(IN_W) + u32(ix);
        for (var ss = 0u; ss < SRC_S; ss++) {
          acc[i] += src[p] * weights[wbase + ss];
          p += IN_ROWS * u32(IN_W);
        }
      }
    }
  }
  let s = ls + {{ slice_base }}u;
  for (var i = 0u; i < BX; i++) {
    let x = x0 + i;
    if (x >= OUT_W) { break; }
    var v = acc[i];
{{ ep.apply(steps) }}
    dst[(s * OUT_ROWS + row) * OUT_W + x] = v;
  }
}
