{% import "epilogue.wgsl" as ep %}
{% include "common.wgsl" %}
// Element-wise op over PHWC4 buffers (binary with broadcasting, activations, PReLU).
// Grid: x covers the pixels of one slice (V vec4 per invocation, strided by the
// work group so neighbouring invocations touch neighbouring vec4), y = slice.
// Operand loads are index expressions built by engine/gpu/kernels/elementwise.py.

@group(0) @binding(0) var<storage, read_write> dst: array<vec4<T>>;
{% for o in operands if o.decl %}
{{ o.decl }}
{% endfor %}
{{ ep.declare(steps) }}

const PLANE: u32 = {{ plane }}u;  // rows * W

@compute @workgroup_size({{ wg }})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
  let s = wid.y;
  for (var k = 0u; k < {{ v }}u; k++) {
    let p = (wid.x * {{ v }}u + k) * {{ wg }}u + lid.x;
    if (p >= PLANE) { return; }
    let i = s * PLANE + p;
    let row = p / {{ w }}u;
    let x = p % {{ w }}u;
    let bi = row / {{ h }}u;
    let y = row % {{ h }}u;
{% for o in operands %}
    let {{ o.var }} = {{ o.load }};
{% endfor %}
    var v = {{ expr }};
{{ ep.apply(steps) }}
{% if mask %}
    if (s == {{ slices - 1 }}u) { v = select(vec4<T>(0.0), v, {{ mask }}); }
{% endif %}
    dst[i] = v;
  }
}
