{% import "epilogue.wgsl" as ep %}
{% import "weights.wgsl" as weights %}
{% import "tensor.wgsl" as tensor %}
{% include "common.wgsl" %}
// Generic 2-D convolution over PHWC4 tensors (buffers or textures, shaders/engine/tensor.wgsl).
// One invocation: BX neighbouring output pixels of one row x BS output slices.
// Kernel taps and the BX x BS accumulators are unrolled at generation time, so
// every weight index is a constant offset (uniform loads, no local arrays); a
// tap outside the input reads a clamped pixel multiplied by 0 (no branches).
{# loop_taps (the compact kernel set): taps in two loops instead, the same sums in the
   same order, a fraction of the code to compile. A template comment: the optimized
   set's WGSL stays byte for byte what the latency predictor was measured on. #}
// Weights: one mat4x4 per (dst slice, ky, kx, src slice); column j holds the
// weights of output lane j, so `src * w` gives the four output lanes.

{{ bindings.src }}
{{ bindings.dst }}
{{ weights.declare(bindings, dst_slices, False, slice_base) }}
{{ ep.declare(steps, bindings) }}

{{ tensor.geometry(in_w, in_h, in_plane, out_w, out_h, out_rows) }}
const SRC_S: u32 = {{ src_slices }}u;
const DST_S: u32 = {{ dst_slices }}u;
const TAP_STRIDE: u32 = {{ kh * kw }}u * SRC_S;  // mat4 per destination slice

@compute @workgroup_size({{ workgroup_size | join(", ") }})
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  let x0 = gid.x * {{ bx }}u;
  let row = gid.y;
  let ls0 = gid.z * {{ bs }}u;
  if (x0 >= OUT_W || row >= OUT_ROWS || ls0 >= DST_S) { return; }
  let in_base = (row / OUT_H) * u32(IN_H);
  let oy = i32(row % OUT_H);
{% for b in range(bs) %}
  let wb{{ b }} = min(ls0 + {{ b }}u, DST_S - 1u) * TAP_STRIDE;
{% for i in range(bx) %}
  var acc{{ b }}_{{ i }} = bias[min(ls0 + {{ b }}u, DST_S - 1u)];
{% endfor %}
{% endfor %}
{% for ky in ([none] if loop_taps else range(kh)) %}
{% if loop_taps %}
  for (var ky = 0; ky < {{ kh }}; ky++) {
    let iy = oy * {{ stride_h }} + ky * {{ dil_h }} - {{ pad_top }};
{% else %}
  {
    let iy = oy * {{ stride_h }} + {{ ky * dil_h - pad_top }};
{% endif %}
{% if bounds %}
    let in_y = iy >= 0 && iy < IN_H;
    let ry = in_base + u32(clamp(iy, 0, IN_H - 1));
{% else %}
    let ry = in_base + u32(iy);
{% endif %}
{% for kx in ([none] if loop_taps else range(kw)) %}
{% if loop_taps %}
    for (var kx = 0; kx < {{ kw }}; kx++) {
{% else %}
    {
{% endif %}
{% for i in range(bx) %}
{% if loop_taps %}
      let ix{{ i }} = i32(x0 + {{ i }}u) * {{ stride_w }} + kx * {{ dil_w }} - {{ pad_left }};
{% else %}
      let ix{{ i }} = i32(x0 + {{ i }}u) * {{ stride_w }} + {{ kx * dil_w - pad_left }};
{% endif %}
{% if bounds %}
      let m{{ i }} = select(A(0.0), A(1.0), in_y && ix{{ i }} >= 0 && ix{{ i }} < IN_W);
      let px{{ i }} = u32(clamp(ix{{ i }}, 0, IN_W - 1));
{% else %}
      let px{{ i }} = u32(ix{{ i }});
{% endif %}
{% if src.kind == "buffer" %}
      let p{{ i }} = ry * u32(IN_W) + px{{ i }};
{% endif %}
{% endfor %}
      for (var ss = 0u; ss < SRC_S; ss++) {
        let off = ss * IN_PLANE;
{% for i in range(bx) %}
        let s{{ i }} = {{ tensor.load(src, "p" ~ i ~ " + off", "px" ~ i, "ry", "ss", "A") }}{% if bounds %} * m{{ i }}{% endif %};
{% endfor %}
{% for b in range(bs) %}
{% if loop_taps %}
        let w{{ b }} = weights[wb{{ b }} + u32(ky * {{ kw }} + kx) * SRC_S + ss];
{% else %}
        let w{{ b }} = weights[wb{{ b }} + {{ (ky * kw + kx) }}u * SRC_S + ss];
{% endif %}
{% for i in range(bx) %}
        acc{{ b }}_{{ i }} += s{{ i }} * w{{ b }};
{% endfor %}
{% endfor %}
      }
    }
{% endfor %}
  }
{% endfor %}
{% for b in range(bs) %}
  if (ls0 + {{ b }}u < DST_S) {
    let s = ls0 + {{ b }}u + {{ slice_base }}u;
{% for i in range(bx) %}
    if (x0 + {{ i }}u < OUT_W) {
      let x = x0 + {{ i }}u;
      var v = acc{{ b }}_{{ i }};
{{ ep.apply(steps) }}
      {{ tensor.store(dst, "(s * OUT_ROWS + row) * OUT_W + x", "x", "row", "s", "vec4<T>(v)") }}
    }
{% endfor %}
  }
{% endfor %}
}
