{% import "epilogue.wgsl" as ep %}
{% import "tensor.wgsl" as tensor %}
{% include "common.wgsl" %}
{% set wg = workgroup_size[0] %}
{% for name in includes %}
{% include name %}
{% endfor %}
// Element-wise op over PHWC4 tensors (binary with broadcasting, activations, PReLU),
// computed in E (f32: operands are converted at the load, the result once at the store).
// Grid: x covers the pixels of one slice (V vec4 per invocation, strided by the
// work group so neighbouring invocations touch neighbouring vec4), y = slice.
// Operand loads are index expressions built by engine/gpu/kernels/elementwise.py;
// tensors are buffers or textures (shaders/engine/tensor.wgsl).

{{ bindings.dst }}
{% for o in operands if o.binding %}
{{ bindings[o.binding] }}
{% endfor %}
{{ ep.declare(steps, bindings) }}

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
{% set load = tensor.load(o.t, o.index, o.x, o.row, o.s, "E") if o.t else o.load %}
    let {{ o.var }} = {% if o.lane0 %}vec4<E>({{ load }}.x){% else %}{{ load }}{% endif %};
{% endfor %}
    var v = {{ expr }};
{{ ep.apply(steps) }}
{% if mask %}
    if (s == {{ slices - 1 }}u) { v = select(vec4<E>(0.0), v, {{ mask }}); }
{% endif %}
    {{ tensor.store(dst, "i", "x", "row", "s", "vec4<T>(v)") }}
  }
}
