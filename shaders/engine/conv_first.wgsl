{% import "epilogue.wgsl" as ep %}
{% import "tensor.wgsl" as tensor %}
{% include "common.wgsl" %}
// First-layer convolution: few input channels (C_in <= 4: one source slice), any
// kernel size and stride (engine/gpu/kernels/conv_first.py).
// One invocation: a BY x BX block of output pixels x the output slices of its slice
// group (gid.z). The block's input footprint is loaded once (clamped address, zero
// outside) and feeds every tap that reads it. The weights are literals in the source:
// a first layer has a few hundred to a few thousand of them, and constants cost no
// loads (uniform reads were the bottleneck on SwiftShader, 0.25 GFLOP/s).
// acc[s] += v.x * W[s][tap][0] + v.y * W[s][tap][1] + ...  (W: one vec4 of output lanes
// per input channel).

{{ bindings.src }}
{{ bindings.dst }}
{{ ep.declare(steps, bindings) }}

{{ tensor.geometry(in_w, in_h, in_plane, out_w, out_h, out_rows) }}
const TILES_Y: u32 = {{ tiles_y }}u;
alias A = f32;

@compute @workgroup_size({{ workgroup_size | join(", ") }})
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  let x0 = gid.x * {{ bx }}u;
  if (x0 >= OUT_W || gid.y >= {{ batch }}u * TILES_Y || gid.z >= {{ groups | length }}u) { return; }
  let batch = gid.y / TILES_Y;
  let oy0 = (gid.y % TILES_Y) * {{ by }}u;
  let in_base = batch * u32(IN_H);
  let ix0 = i32(x0) * {{ stride_w }} - {{ pad_left }};
  let iy0 = i32(oy0) * {{ stride_h }} - {{ pad_top }};
{% for c in range(foot_w) %}
  let cx{{ c }} = ix0 + {{ c }};
  let vx{{ c }} = cx{{ c }} >= 0 && cx{{ c }} < IN_W;
  let px{{ c }} = u32(clamp(cx{{ c }}, 0, IN_W - 1));
{% endfor %}
  switch (gid.z) {
{% for g in groups %}
    case {{ loop.index0 }}u: {
{% for s in g.slices %}{% for oy in range(by) %}{% for ox in range(bx) %}
      var a{{ s }}_{{ oy }}_{{ ox }} = vec4<A>({{ g.bias[s] }});
{% endfor %}{% endfor %}{% endfor %}
{% for taps in plan %}
      {
        let cy = iy0 + {{ loop.index0 }};
        let vy = cy >= 0 && cy < IN_H;
        let ry = in_base + u32(clamp(cy, 0, IN_H - 1));
{% set used = taps | map(attribute=2) | unique | list %}
{% for c in used %}
        let v{{ c }} = select(vec4<A>(0.0), {{ tensor.load(src, "ry * u32(IN_W) + px" ~ c, "px" ~ c, "ry", "0u", "A") }}, vy && vx{{ c }});
{% endfor %}
{% for oy, ox, c, t in taps %}
{% for s in g.slices %}
        a{{ s }}_{{ oy }}_{{ ox }} += {% for lane in range(in_c) %}{% if not loop.first %} + {% endif %}v{{ c }}.{{ "xyzw"[lane] }} * vec4<A>({{ g.weights[s][t][lane] }}){% endfor %};
{% endfor %}
{% endfor %}
      }
{% endfor %}
{% for s in g.slices %}{% for oy in range(by) %}{% for ox in range(bx) %}
      {
        let x = x0 + {{ ox }}u;
        let y = oy0 + {{ oy }}u;
        if (x < OUT_W && y < OUT_H) {
          let row = batch * OUT_H + y;
          let s = {{ s }}u;
          var v = vec4<T>(a{{ s }}_{{ oy }}_{{ ox }});
{{ ep.apply(steps) }}
          {{ tensor.store(dst, "(s * OUT_ROWS + row) * OUT_W + x", "x", "row", "s", "v") }}
        }
      }
{% endfor %}{% endfor %}{% endfor %}
    }
{% endfor %}
    default: {}
  }
}
