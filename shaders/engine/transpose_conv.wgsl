{% import "epilogue.wgsl" as ep %}
{% import "weights.wgsl" as weights %}
{% import "tensor.wgsl" as tensor %}
{% include "common.wgsl" %}
// Transposed convolution as a gather over PHWC4 tensors, buffers or textures
// (engine/gpu/kernels/transpose_conv.py, shaders/engine/tensor.wgsl):
// output pixel (oy, ox) sums input pixel (iy, ix) times tap (fy, fx) wherever
// iy * SH - PAD_T + fy == oy (and likewise in x).
// One invocation: a BY x BX block of outputs (BY a multiple of SH, BX of SW) of one slice,
// so every output of the block has a compile-time stride phase: its taps and the input
// offsets they read are unrolled (the plan comes from Python); each input pixel of the
// block's footprint is loaded once per source slice.
// Weights: one mat4x4 per (dst slice, fy, fx, src slice), column j = output lane j.

{{ bindings.src }}
{{ bindings.dst }}
{{ weights.declare(bindings, dst_slices, shared, slice_base) }}
{{ ep.declare(steps, bindings) }}

{{ tensor.geometry(in_w, in_h, in_plane, out_w, out_h, out_rows) }}
const SRC_S: u32 = {{ src_slices }}u;

@compute @workgroup_size({{ workgroup_size | join(", ") }})
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  let ls = gid.z;
  if (gid.x >= {{ tiles_x }}u || gid.y >= {{ batch * tiles_y }}u || ls >= slice_count()) {
    return;
  }
  let batch = gid.y / {{ tiles_y }}u;
  let ty = gid.y % {{ tiles_y }}u;
  let x0 = gid.x * {{ bx }}u;
  let y0 = ty * {{ by }}u;
  // input pixel of offset 0: the block start divided by the stride
  let iy0 = i32(ty * {{ ry }}u);
  let ix0 = i32(gid.x * {{ rx }}u);
  let plane = batch * u32(IN_H * IN_W);
{% for o in offs_y %}
  let cy{{ loop.index0 }} = iy0 + {{ o }};
  let vy{{ loop.index0 }} = cy{{ loop.index0 }} >= 0 && cy{{ loop.index0 }} < IN_H;
  let ry{{ loop.index0 }} = batch * u32(IN_H) + u32(clamp(cy{{ loop.index0 }}, 0, IN_H - 1));  // texture row
  let py{{ loop.index0 }} = plane + u32(clamp(cy{{ loop.index0 }}, 0, IN_H - 1) * IN_W);
{% endfor %}
{% for o in offs_x %}
  let cx{{ loop.index0 }} = ix0 + {{ o }};
  let vx{{ loop.index0 }} = cx{{ loop.index0 }} >= 0 && cx{{ loop.index0 }} < IN_W;
  let px{{ loop.index0 }} = u32(clamp(cx{{ loop.index0 }}, 0, IN_W - 1));
{% endfor %}
{% for out in outputs %}
  var a{{ out.dy }}_{{ out.dx }} = vec4<A>(0.0);
{% endfor %}
  let wb = ls * {{ kh * kw }}u * SRC_S;
  for (var si = 0u; si < SRC_S; si++) {
    let base = si * IN_PLANE;
{% for iy, ix in loads %}
    let v{{ iy }}_{{ ix }} = select(vec4<A>(0.0), {{ tensor.load(src, "base + py%d + px%d" % (iy, ix), "px%d" % ix, "ry%d" % iy, "si", "A") }}, vy{{ iy }} && vx{{ ix }});
{% endfor %}
{% for out in outputs %}
{% for t in out.taps %}
    a{{ out.dy }}_{{ out.dx }} += v{{ t.iy }}_{{ t.ix }} * weights[wb + {{ t.tap }}u * SRC_S + si];
{% endfor %}
{% endfor %}
  }
  let s = ls + first_slice();
  let b = bias[ls];
{% for out in outputs %}
  {
    let x = x0 + {{ out.dx }}u;
    let y = y0 + {{ out.dy }}u;
    if (x < OUT_W && y < OUT_H) {
      let row = batch * OUT_H + y;
      var v = a{{ out.dy }}_{{ out.dx }} + b;
{{ ep.apply(steps) }}
      {{ tensor.store(dst, "(s * OUT_ROWS + row) * OUT_W + x", "x", "row", "s", "vec4<T>(v)") }}
    }
  }
{% endfor %}
}
