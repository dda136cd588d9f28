{% import "epilogue.wgsl" as ep %}
{% import "tensor.wgsl" as tensor %}
{% include "common.wgsl" %}
// Windowed max / average pool over PHWC4 tensors (buffers or textures, shaders/engine/tensor.wgsl);
// one invocation per output vec4.
// Taps outside [LO, HI) are ignored (TFLite SAME); with explicit padding, taps in
// [LO, HI) but outside the input are zeros that count (a merged PAD).

{{ bindings.src }}
{{ bindings.dst }}
{{ ep.declare(steps, bindings) }}

const IN_H: i32 = {{ in_h }};
const IN_W: i32 = {{ in_w }};
const OUT_H: u32 = {{ out_h }}u;
const OUT_W: u32 = {{ out_w }}u;
const OUT_ROWS: u32 = {{ out_rows }}u;

@compute @workgroup_size({{ workgroup_size | join(", ") }})
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  let x = gid.x;
  let row = gid.y;
  let s = gid.z;
  if (x >= OUT_W || row >= OUT_ROWS || s >= {{ slices }}u) { return; }
  let batch = row / OUT_H;
  let oy = i32(row % OUT_H);
  let base = s * {{ in_plane }}u + batch * u32(IN_H * IN_W);
{% if src.kind == "texture" %}
  let in_base = batch * u32(IN_H);  // first input row
{% endif %}
{% if reduce == "max" %}
  var acc = vec4<T>({{ lowest }});
{% else %}
  var acc = vec4<T>(0.0);
  var count = 0u;  // taps that count: all of them when no window leaves the input
{% endif %}
  for (var ky = 0; ky < {{ kh }}; ky++) {
    let iy = oy * {{ stride_h }} - {{ pad_top }} + ky;
{% if checks %}
    if (iy < {{ lo_h }} || iy >= {{ hi_h }}) { continue; }
{% endif %}
    for (var kx = 0; kx < {{ kw }}; kx++) {
      let ix = i32(x) * {{ stride_w }} - {{ pad_left }} + kx;
{% if checks %}
      if (ix < {{ lo_w }} || ix >= {{ hi_w }}) { continue; }
{% endif %}
{% if explicit %}
      var t = vec4<T>(0.0);
      if (iy >= 0 && iy < IN_H && ix >= 0 && ix < IN_W) {
        t = {{ tensor.load(src, "base + u32(iy * IN_W + ix)", "u32(ix)", "in_base + u32(iy)", "s") }};
      }
{% else %}
      let t = {{ tensor.load(src, "base + u32(iy * IN_W + ix)", "u32(ix)", "in_base + u32(iy)", "s") }};
{% endif %}
{% if reduce == "max" %}
      acc = max(acc, t);
{% else %}
      acc += t;
      count++;
{% endif %}
    }
  }
{% if reduce == "max" %}
  var v = acc;
{% elif checks %}
  var v = acc / T(count);
{% else %}
  var v = acc / T({{ kh * kw }});
{% endif %}
{{ ep.apply(steps) }}
{% if mask %}
  if (s == {{ slices - 1 }}u) { v = select(vec4<T>(0.0), v, {{ mask }}); }
{% endif %}
  {{ tensor.store(dst, "(s * OUT_ROWS + row) * OUT_W + x", "x", "row", "s", "v") }}
}
