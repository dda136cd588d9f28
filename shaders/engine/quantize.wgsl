{% import "epilogue.wgsl" as ep %}
{% import "tensor.wgsl" as tensor %}
{% include "common.wgsl" %}
// QUANTIZE / DEQUANTIZE of a quantized model run in float (engine/transforms/quantized.py):
// every value rounded to one int8/uint8 grid and clamped to its range (fake
// quantization, as TFLite's GPU delegate's QUANTIZE_AND_DEQUANTIZE), then the op's
// epilogue. One vec4 per invocation; x = pixel of a slice, y = slice. Tensors are
// buffers or textures (shaders/engine/tensor.wgsl); padded lanes (0) stay 0.

{{ bindings.src }}
{{ bindings.dst }}
{{ ep.declare(steps, bindings) }}

const PLANE: u32 = {{ plane }}u;  // rows * W

@compute @workgroup_size({{ workgroup_size[0] }})
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  let p = gid.x;
  let s = gid.y;
  if (p >= PLANE) { return; }
  let i = s * PLANE + p;
  let row = p / {{ w }}u;
  let x = p % {{ w }}u;
  var v = {{ tensor.load(src, "i", "x", "row", "s") }};
{{ ep.quant(grid) }}
{{ ep.apply(steps) }}
  {{ tensor.store(dst, "i", "x", "row", "s", "v") }}
}
