{% import "epilogue.wgsl" as ep %}
{% import "weights.wgsl" as weights %}
{% import "tensor.wgsl" as tensor %}
{% import "depthwise_block.wgsl" as block %}
{% include "common.wgsl" %}
// Depthwise convolution over PHWC4 tensors (engine/gpu/kernels/depthwise.py), buffers
// or textures (shaders/engine/tensor.wgsl).
// Weights: one vec4 per (dst slice, ky, kx), lanes = output channels.
// tiled:   one invocation = a BY x BX block of output pixels of one slice; the block's
//          input footprint is loaded once (clamped address, zero outside), taps unrolled.
// generic: one invocation = one output pixel of one slice; multiplier M > 1 gathers
//          input channel o / M for each output lane o.

{{ bindings.src }}
{{ bindings.dst }}
{{ weights.declare(bindings, dst_slices, shared, slice_base) }}
{{ ep.declare(steps, bindings) }}

{{ tensor.geometry(in_w, in_h, in_plane, out_w, out_h, out_rows) }}
const KK: u32 = {{ kh * kw }}u;

{% if tiled %}
@compute @workgroup_size({{ workgroup_size | join(", ") }})
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  let x0 = gid.x * {{ bx }}u;
  let ls = gid.z;
  if (x0 >= OUT_W || gid.y >= {{ batch * tiles_y }}u || ls >= slice_count()) { return; }
  let batch = gid.y / {{ tiles_y }}u;
  let oy0 = (gid.y % {{ tiles_y }}u) * {{ by }}u;
  let s = ls + first_slice();
{% if src.kind == "buffer" %}
  let plane = s * IN_PLANE + batch * u32(IN_H * IN_W);
{% else %}
  let in_base = batch * u32(IN_H);
{% endif %}
  let ix0 = i32(x0) * {{ stride_w }} - {{ pad_left }};
  let iy0 = i32(oy0) * {{ stride_h }} - {{ pad_top }};
  let wb = ls * KK;
{% for t in range(kh * kw) %}
  let w{{ t }} = weights[wb + {{ t }}u];
{% endfor %}
{{ block.taps(src, plan, by, bx, foot_w) }}
  let b = bias[ls];
{% for oy in range(by) %}{% for ox in range(bx) %}
  {
    let x = x0 + {{ ox }}u;
    let y = oy0 + {{ oy }}u;
    if (x < OUT_W && y < OUT_H) {
      let row = batch * OUT_H + y;
      var v = a{{ oy }}_{{ ox }} + b;
{{ ep.apply(steps) }}
      {{ tensor.store(dst, "(s * OUT_ROWS + row) * OUT_W + x", "x", "row", "s", "vec4<T>(v)") }}
    }
  }
{% endfor %}{% endfor %}
}
{% else %}

fn load(s: u32, in_row: u32, ix: u32) -> vec4<A> {
  let pix = in_row * u32(IN_W) + ix;
{% if mult == 1 %}
  return {{ tensor.load(src, "s * IN_PLANE + pix", "ix", "in_row", "s", "A") }};
{% else %}
  var r: vec4<A>;
  for (var j = 0u; j < 4u; j++) {
    let ic = min((s * 4u + j) / {{ mult }}u, {{ in_c - 1 }}u);
    r[j] = {{ tensor.load(src, "(ic / 4u) * IN_PLANE + pix", "ix", "in_row", "ic / 4u", "A") }}[ic % 4u];
  }
  return r;
{% endif %}
}

@compute @workgroup_size({{ workgroup_size | join(", ") }})
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  let x = gid.x;
  let row = gid.y;
  let ls = gid.z;
  if (x >= OUT_W || row >= OUT_ROWS || ls >= slice_count()) { return; }
  let s = ls + first_slice();
  let batch = row / OUT_H;
  let oy = i32(row % OUT_H);
  let ix0 = i32(x) * {{ stride_w }} - {{ pad_left }};
  var acc = vec4<A>(0.0);
  for (var ky = 0; ky < {{ kh }}; ky++) {
    let iy = oy * {{ stride_h }} - {{ pad_top }} + ky * {{ dil_h }};
    if (iy < 0 || iy >= IN_H) { continue; }
    let in_row = batch * u32(IN_H) + u32(iy);
    for (var kx = 0; kx < {{ kw }}; kx++) {
      let ix = ix0 + kx * {{ dil_w }};
      if (ix < 0 || ix >= IN_W) { continue; }
      acc += load(s, in_row, u32(ix)) * weights[ls * KK + u32(ky * {{ kw }} + kx)];
    }
  }
  var v = acc + bias[ls];
{{ ep.apply(steps) }}
  {{ tensor.store(dst, "(s * OUT_ROWS + row) * OUT_W + x", "x", "row", "s", "vec4<T>(v)") }}
}
{% endif %}
