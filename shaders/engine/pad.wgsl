{% import "epilogue.wgsl" as ep %}
{% include "common.wgsl" %}
{% set wg = workgroup_size[0] %}
// Constant PAD over PHWC4 buffers: output (batch, y, x, c) reads input
// (batch - PB, y - PT, x - PL, c - PC) when inside it, else the pad value.
// Grid: x covers the pixels of one slice (V vec4 per invocation, strided by the
// work group), y = slice.

{{ bindings.src }}
{{ bindings.dst }}
{{ ep.declare(steps, bindings) }}

const PLANE: u32 = {{ plane }}u;
const IN_PLANE: u32 = {{ in_plane }}u;

@compute @workgroup_size({{ wg }})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
  let s = wid.y;
  for (var k = 0u; k < {{ v }}u; k++) {
    let p = (wid.x * {{ v }}u + k) * {{ wg }}u + lid.x;
    if (p >= PLANE) { return; }
    let row = p / {{ out_w }}u;
    let x = p % {{ out_w }}u;
    let ib = i32(row / {{ out_h }}u) - {{ pad_b }};
    let iy = i32(row % {{ out_h }}u) - {{ pad_t }};
    let ix = i32(x) - {{ pad_l }};
    var v = vec4<T>({{ value }});
    if (ib >= 0 && ib < {{ in_b }} && iy >= 0 && iy < {{ in_h }} && ix >= 0 && ix < {{ in_w }}) {
      let pix = u32((ib * {{ in_h }} + iy) * {{ in_w }} + ix);
{% if pad_c % 4 == 0 %}
      let is = i32(s) - {{ pad_c // 4 }};
      if (is >= 0 && is < {{ in_slices }}) {
{% if fill_lanes %}
        let c = vec4<i32>(is * 4) + vec4<i32>(0, 1, 2, 3);
        v = select(v, src[u32(is) * IN_PLANE + pix], c < vec4<i32>({{ in_c }}));
{% else %}
        v = src[u32(is) * IN_PLANE + pix];
{% endif %}
      }
{% else %}
      for (var lane = 0; lane < 4; lane++) {  // channel offset not a multiple of 4
        let c = i32(s) * 4 + lane - {{ pad_c }};
        if (c >= 0 && c < {{ in_c }}) { v[lane] = src[u32(c / 4) * IN_PLANE + pix][c % 4]; }
      }
{% endif %}
    }
{{ ep.apply(steps) }}
{% if mask %}
    if (s == {{ slices - 1 }}u) { v = select(vec4<T>(0.0), v, {{ mask }}); }
{% endif %}
    dst[s * PLANE + p] = v;
  }
}
