{% import "phwc4_grid.wgsl" as grid %}
{% import "tensor.wgsl" as tensor %}
{% include "common.wgsl" %}
// MediaPipe's TransformTensorBilinear V2 (engine/gpu/kernels/transform_tensor.py): output
// pixel (x, y) samples the data at (t0 . p, t1 . p), p = (x, y, 0, 1), t the matrix's
// first two rows corrected to pixel centres; 0 outside the data, bilinear inside with
// neighbours past the edge reading 0. Data and output: buffers or textures.

{{ bindings.src }}
{{ bindings.matrix }}
{{ bindings.dst }}

// Neighbour (cx, cy) of slice s, 0 past the edge
fn tap(cx: i32, cy: i32, s: u32) -> vec4<E> {
  if (cx < 0 || cy < 0 || cx >= {{ in_w }} || cy >= {{ in_h }}) { return vec4<E>(0.0); }
  let x = u32(cx);
  let row = u32(cy);
  return {{ tensor.load(src, "(s * %du + row) * %du + x" % (in_h, in_w), "x", "row", "s", "E") }};
}

@compute @workgroup_size({{ workgroup_size[0] }})
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
{{ grid.decode(box) }}
  var xt = vec4<f32>(matrix[0]);
  var yt = vec4<f32>(matrix[1]);
  xt.w += xt.x * 0.5 + xt.y * 0.5 - 0.5;
  yt.w += yt.x * 0.5 + yt.y * 0.5 - 0.5;
  let p = vec4<f32>(f32(x), f32(h), 0.0, 1.0);
  let tc = vec2<f32>(dot(xt, p), dot(yt, p));
  var v = vec4<E>(0.0);
  // !(inside) rather than the C++'s outside test: a NaN coordinate reads nothing
  let inside = tc.x >= 0.0 && tc.x <= {{ in_w - 1 }}.0 && tc.y >= 0.0 && tc.y <= {{ in_h - 1 }}.0;
  if (inside) {
    let f = floor(tc);
    let cx = i32(f.x);
    let cy = i32(f.y);
    let right = E(tc.x - f.x);
    let lower = E(tc.y - f.y);
    let upper_row = (1.0 - right) * tap(cx, cy, s) + right * tap(cx + 1, cy, s);
    let lower_row = (1.0 - right) * tap(cx, cy + 1, s) + right * tap(cx + 1, cy + 1, s);
    v = lower * lower_row + (1.0 - lower) * upper_row;
  }
  {{ tensor.store(dst, "out_index", "x", "row", "s", "vec4<T>(v)") }}
}
