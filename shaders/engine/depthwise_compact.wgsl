{% import "epilogue.wgsl" as ep %}
{% import "params.wgsl" as params %}
{% import "tensor.wgsl" as tensor %}
{% include "common.wgsl" %}
// Depthwise convolution of the compact kernel set (engine/gpu/kernels/depthwise.py): the
// generic kernel of depthwise.wgsl (one output pixel of one slice per invocation, any
// kernel, stride, dilation, multiplier), with the shapes from the uniform G and the
// weights in runtime-sized arrays: one pipeline serves every depthwise layer with the
// same storage kinds, multiplier form (1 or gathered) and epilogue.
// Weights: one vec4 per (dst slice, ky, kx), lanes = output channels.

{{ bindings.src }}
{{ bindings.dst }}
alias A = f32;
{{ bindings.weights }}
{{ bindings.bias }}
{{ params.declare(fields, bindings.G) }}
{{ ep.declare(steps, bindings) }}

fn load(s: u32, in_row: u32, ix: u32) -> vec4<A> {
  let pix = in_row * u32(G.in_w) + ix;
{% if gather %}
  // multiplier M > 1: output channel o reads input channel o / M
  var r: vec4<A>;
  for (var j = 0u; j < 4u; j++) {
    let ic = min((s * 4u + j) / G.mult, G.in_c - 1u);
    r[j] = {{ tensor.load(src, "(ic / 4u) * G.in_plane + pix", "ix", "in_row", "ic / 4u", "A") }}[ic % 4u];
  }
  return r;
{% else %}
  return {{ tensor.load(src, "s * G.in_plane + pix", "ix", "in_row", "s", "A") }};
{% endif %}
}

{{ params.main(workgroup_size) }}
  if (i >= G.out_w * G.out_rows * G.dst_slices) { return; }
  let x = i % G.out_w;
  let row = i / G.out_w % G.out_rows;
  let s = i / (G.out_w * G.out_rows);
  let batch = row / G.out_h;
  let oy = i32(row % G.out_h);
  let ix0 = i32(x) * G.stride_w - G.pad_left;
  let taps = u32(G.kh * G.kw);
  var acc = vec4<A>(0.0);
  for (var ky = 0; ky < G.kh; ky++) {
    let iy = oy * G.stride_h - G.pad_top + ky * G.dil_h;
    if (iy < 0 || iy >= G.in_h) { continue; }
    let in_row = batch * u32(G.in_h) + u32(iy);
    for (var kx = 0; kx < G.kw; kx++) {
      let ix = ix0 + kx * G.dil_w;
      if (ix < 0 || ix >= G.in_w) { continue; }
      acc += load(s, in_row, u32(ix)) * weights[s * taps + u32(ky * G.kw + kx)];
    }
  }
  var v = acc + bias[s];
{{ ep.apply(steps) }}
  {{ tensor.store(dst, "(s * G.out_rows + row) * G.out_w + x", "x", "row", "s", "vec4<T>(v)") }}
}
