{% import "epilogue.wgsl" as ep %}
{% import "params.wgsl" as params %}
{% import "tensor.wgsl" as tensor %}
{% include "common.wgsl" %}
// 1x1 convolution of the compact kernel set (engine/gpu/kernels/conv1x1.py): the sums of
// conv1x1.wgsl in the same order, one output vec4 per invocation, the shapes from the
// uniform G and the weights in runtime-sized arrays: one pipeline serves every 1x1 layer
// with the same storage kinds, gate and epilogue.
// Weights: one mat4x4 per (dst slice, src slice), column j = output lane j.

{{ bindings.src }}
{{ bindings.dst }}
alias A = f32;
{{ bindings.weights }}
{{ bindings.bias }}
{{ params.declare(fields, bindings.G) }}
{% if scale is not none %}
// A fused squeeze-excite gate: the input is scaled per channel before the matmul.
{{ bindings.in_scale }}
{% endif %}
{{ ep.declare(steps, bindings) }}

{{ params.main(workgroup_size) }}
  if (i >= G.pixels * G.dst_slices) { return; }
  let p = i % G.pixels;  // pixel of the flattened rows * W
  let s = i / G.pixels;  // output slice
  let x = p % G.out_w;
  let row = p / G.out_w;
  var acc = vec4<A>(0.0);
  for (var si = 0u; si < G.src_slices; si++) {
{% if scale is not none %}
    let g = {{ tensor.load(scale, "si", "0u", "0u", "si", "A") }};
{% endif %}
    let v = {{ tensor.load(src, "si * G.pixels + p", "x", "row", "si", "A") }}{% if scale is not none %} * g{% endif %};
    acc += v * weights[s * G.src_slices + si];
  }
  var v = acc + bias[s];
{{ ep.apply(steps) }}
  {{ tensor.store(dst, "s * G.pixels + p", "x", "row", "s", "vec4<T>(v)") }}
}
