{% import "epilogue.wgsl" as ep %}
{% import "phwc4_grid.wgsl" as grid %}
{% import "tensor.wgsl" as tensor %}
{% include "common.wgsl" %}
// RESIZE_BILINEAR / RESIZE_NEAREST_NEIGHBOR as TFLite's reference kernels
// (engine/reference/resize.py): source coordinates in f32 whatever T is, from
// the f32 scale computed on the host; the blend runs in E (f32), same term order.
// One invocation: a 2x2 output block (up2) or BX output vec4 along x.
// Padded lanes stay 0 (the input's are 0), forced after an epilogue. Input and output
// are buffers or textures (shaders/engine/tensor.wgsl).

{{ bindings.src }}
{{ bindings.dst }}
{{ ep.declare(steps, bindings) }}

const SCALE_Y: f32 = {{ scale_y }};
const SCALE_X: f32 = {{ scale_x }};

{% if bilinear %}
struct Taps { lo: u32, hi: u32, frac: f32 }

// Lower/upper source index and the weight of the upper one. With half-pixel
// centres v can be < 0: indices are clamped, the weight is not (as TFLite).
fn taps(i: u32, scale: f32, size: u32) -> Taps {
{% if half_pixel %}
  let v = (f32(i) + 0.5) * scale - 0.5;
{% else %}
  let v = f32(i) * scale;
{% endif %}
  let lo = max(floor(v), 0.0);
  let hi = min(ceil(v), f32(size - 1u));
  return Taps(u32(lo), u32(hi), v - lo);
}
{% else %}
// GetNearestNeighbor: floor, or round half up with align_corners; v >= 0, and
// v - floor(v) is exact, so ties match the reference bit for bit.
fn nearest(i: u32, scale: f32, size: u32) -> u32 {
  let v = (f32(i){{ " + 0.5" if half_pixel else "" }}) * scale;
  var n = floor(v);
{% if align_corners %}
  if (v - n >= 0.5) { n += 1.0; }
{% endif %}
  return min(u32(n), size - 1u);
}
{% endif %}

@compute @workgroup_size({{ workgroup_size[0] }})
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
{{ grid.decode(box) }}
  let base = s * {{ in_rows }}u + b * {{ in_h }}u;
{% if up2 %}
  // x2 with half-pixel centres: output block (2h + a, 2x + c), a, c in {0, 1},
  // blends rows a, a + 1 and columns c, c + 1 of the clamped 3x3 input
  // neighbourhood of (h, x): output 2j samples j - 0.25 (taps j - 1, j), 2j + 1
  // samples j + 0.25 (taps j, j + 1), clamped; taps() gives the weights with
  // TFLite's edge rule. Scale 0.5 makes these coordinates exact in f32.
  let ys = vec3<u32>(max(h, 1u) - 1u, h, min(h + 1u, {{ in_h - 1 }}u));
  let xs = vec3<u32>(max(x, 1u) - 1u, x, min(x + 1u, {{ in_w - 1 }}u));
  var n: array<vec4<E>, 9>;
{% for r in range(3) %}
{% for c in range(3) %}
  n[{{ r * 3 + c }}] = {{ tensor.load(src, "(base + ys[%d]) * %du + xs[%d]" % (r, in_w, c), "xs[%d]" % c, "b * %du + ys[%d]" % (in_h, r), "s", "E") }};
{% endfor %}
{% endfor %}
  let one = E(1.0);
{% for a in range(2) %}
{% for c in range(2) %}
  {
    let row = b * {{ out_h }}u + 2u * h + {{ a }}u;
    let x = 2u * x + {{ c }}u;
    let dy = E(taps(2u * h + {{ a }}u, SCALE_Y, {{ in_h }}u).frac);
    let dx = E(taps(x, SCALE_X, {{ in_w }}u).frac);
    var v = n[{{ a * 3 + c }}] * (one - dy) * (one - dx) + n[{{ a * 3 + c + 3 }}] * dy * (one - dx)
          + n[{{ a * 3 + c + 1 }}] * (one - dy) * dx + n[{{ a * 3 + c + 4 }}] * dy * dx;
{{ ep.apply(steps) }}
{% if steps %}
{{ tensor.zero_padded_lanes(out_c) }}
{% endif %}
    {{ tensor.store(dst, "(s * %du + row) * %du + x" % (out_rows, out_w), "x", "row", "s", "vec4<T>(v)") }}
  }
{% endfor %}
{% endfor %}
{% else %}
{% if bilinear %}
  let ty = taps(h, SCALE_Y, {{ in_h }}u);
  let r0 = (base + ty.lo) * {{ in_w }}u;
  let r1 = (base + ty.hi) * {{ in_w }}u;
  let row0 = b * {{ in_h }}u + ty.lo;  // texture rows of the two taps
  let row1 = b * {{ in_h }}u + ty.hi;
  let dy = E(ty.frac);
  let one = E(1.0);
{% else %}
  let ny = nearest(h, SCALE_Y, {{ in_h }}u);
  let r = (base + ny) * {{ in_w }}u;
  let row_n = b * {{ in_h }}u + ny;
{% endif %}
  let x0 = x;
  for (var k = 0u; k < {{ box.bx }}u; k++) {
    let x = x0 + k;
{% if box.ragged %}
    if (x >= {{ box.x_end }}u) { break; }
{% endif %}
{% if bilinear %}
    let tx = taps(x, SCALE_X, {{ in_w }}u);
    let dx = E(tx.frac);
    var v = {{ tensor.load(src, "r0 + tx.lo", "tx.lo", "row0", "s", "E") }} * (one - dy) * (one - dx)
          + {{ tensor.load(src, "r1 + tx.lo", "tx.lo", "row1", "s", "E") }} * dy * (one - dx)
          + {{ tensor.load(src, "r0 + tx.hi", "tx.hi", "row0", "s", "E") }} * (one - dy) * dx
          + {{ tensor.load(src, "r1 + tx.hi", "tx.hi", "row1", "s", "E") }} * dy * dx;
{% else %}
    let nx = nearest(x, SCALE_X, {{ in_w }}u);
    var v = {{ tensor.load(src, "r + nx", "nx", "row_n", "s", "E") }};
{% endif %}
{{ ep.apply(steps) }}
{% if steps %}
{{ tensor.zero_padded_lanes(out_c) }}
{% endif %}
    {{ tensor.store(dst, "out_index + k", "x", "row", "s", "vec4<T>(v)") }}
  }
{% endif %}
}
