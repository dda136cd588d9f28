{% import "epilogue.wgsl" as ep %}
{% import "tensor.wgsl" as tensor %}
{% import "depthwise_block.wgsl" as block %}
{% include "common.wgsl" %}
{% set wg = workgroup_size[0] %}
// A depthwise conv and the 1x1 conv that reads it, in one dispatch
// (engine/gpu/kernels/depthwise_conv1x1.py). One work group = a TH x TW tile of output
// pixels, every channel:
// 1. its invocations compute the depthwise result of the tile, every slice, into work
//    group memory (`mid`, [slice][tile pixel]), BY x BX pixels of one slice each; the
//    depthwise activation applies there;
// 2. after a barrier, each invocation computes BP pixels x BS output slices of the 1x1
//    conv from `mid` (weights: one mat4x4 per (dst slice, src slice), column j = output
//    lane j), then the 1x1 conv's epilogue, and stores.
// quad: the 4 invocations of a quad (consecutive local indices, the same output slices)
// each load one column of a weight matrix and share them (quadBroadcast).
// The depthwise result never goes to memory: one dispatch and one tensor fewer.

{{ bindings.src }}
{{ bindings.dst }}
alias A = f32;
{{ bindings.dw_weights }}
{{ bindings.dw_bias }}
{{ bindings.weights }}
{{ bindings.bias }}
{{ ep.declare(steps, bindings) }}

{{ tensor.geometry(in_w, in_h, in_plane, out_w, out_h, out_rows) }}
const SRC_S: u32 = {{ src_slices }}u;
const DST_S: u32 = {{ dst_slices }}u;
// A work group's tile: TH x TW output pixels of one image, TPIX in all.
const TH: u32 = {{ th }}u;
const TW: u32 = {{ tw }}u;
const TPIX: u32 = {{ th * tw }}u;
const TILES_Y: u32 = {{ tiles_y }}u;
const WG: u32 = {{ wg }}u;

var<workgroup> mid: array<vec4<A>, {{ th * tw * src_slices }}>;

@compute @workgroup_size({{ wg }}, 1, 1)
fn main(@builtin(workgroup_id) group: vec3<u32>, @builtin(local_invocation_index) li: u32) {
  let x0 = group.x * TW;
  let batch = group.y / TILES_Y;
  let y0 = (group.y % TILES_Y) * TH;
  // 1. depthwise: one item = a BY x BX block of one slice, its input footprint loaded
  //    once (clamped address, zero outside), taps unrolled (depthwise_block.wgsl)
  for (var i = li; i < {{ src_slices * (th // by) * (tw // bx) }}u; i += WG) {
    let s = i / {{ (th // by) * (tw // bx) }}u;
    let b = i % {{ (th // by) * (tw // bx) }}u;
    let bx0 = (b % {{ tw // bx }}u) * {{ bx }}u;
    let by0 = (b / {{ tw // bx }}u) * {{ by }}u;
    let ix0 = i32(x0 + bx0) * {{ stride_w }} - {{ pad_left }};
    let iy0 = i32(y0 + by0) * {{ stride_h }} - {{ pad_top }};
{% if src.kind == "buffer" %}
    let plane = s * IN_PLANE + batch * u32(IN_H * IN_W);
{% else %}
    let in_base = batch * u32(IN_H);
{% endif %}
{% for t in range(kh * kw) %}
    let w{{ t }} = dw_weights[s * {{ kh * kw }}u + {{ t }}u];
{% endfor %}
{{ block.taps(src, plan, by, bx, foot_w, pad="    ") }}
    let db = dw_bias[s];
{% for oy in range(by) %}{% for ox in range(bx) %}
    {
      var v = vec4<E>(a{{ oy }}_{{ ox }} + db);
{{ ep.apply(dw_steps) }}
      mid[s * TPIX + (by0 + {{ oy }}u) * TW + bx0 + {{ ox }}u] = v;
    }
{% endfor %}{% endfor %}
  }
  workgroupBarrier();
  // 2. the 1x1 conv from `mid`: one item = BP tile pixels x BS output slices
  for (var i = li; i < {{ (th * tw // bp) * blocks }}u; i += WG) {
    let k0 = (i % {{ th * tw // bp }}u) * {{ bp }}u;  // first pixel in the tile
    let so0 = (i / {{ th * tw // bp }}u) * {{ bs }}u;  // first output slice
{% for j in range(bs) %}
    let sl{{ j }} = min(so0 + {{ j }}u, DST_S - 1u);
{% for k in range(bp) %}
    var a{{ j }}_{{ k }} = vec4<A>(0.0);
{% endfor %}
{% endfor %}
    for (var si = 0u; si < SRC_S; si++) {
{% for k in range(bp) %}
      let x{{ k }} = mid[si * TPIX + k0 + {{ k }}u];
{% endfor %}
{% for j in range(bs) %}
      {
{% if quad %}
        let wq = weights[sl{{ j }} * SRC_S + si][li % 4u];
        let w = mat4x4<A>(quadBroadcast(wq, 0u), quadBroadcast(wq, 1u), quadBroadcast(wq, 2u), quadBroadcast(wq, 3u));
{% else %}
        let w = weights[sl{{ j }} * SRC_S + si];
{% endif %}
{% for k in range(bp) %}
        a{{ j }}_{{ k }} += x{{ k }} * w;
{% endfor %}
      }
{% endfor %}
    }
{% for k in range(bp) %}
    {
      let x = x0 + (k0 + {{ k }}u) % TW;
      let y = y0 + (k0 + {{ k }}u) / TW;
      if (x < OUT_W && y < OUT_H) {
        let row = batch * OUT_H + y;
{% for j in range(bs) %}
        if (so0 + {{ j }}u < DST_S) {
          let s = so0 + {{ j }}u;
          var v = a{{ j }}_{{ k }} + bias[sl{{ j }}];
{{ ep.apply(steps) }}
          {{ tensor.store(dst, "(s * OUT_ROWS + row) * OUT_W + x", "x", "row", "s", "vec4<T>(v)") }}
        }
{% endfor %}
      }
    }
{% endfor %}
  }
}
