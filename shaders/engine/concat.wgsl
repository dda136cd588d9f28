{% import "epilogue.wgsl" as ep %}
{% import "phwc4_grid.wgsl" as grid %}
{% import "tensor.wgsl" as tensor %}
{% include "common.wgsl" %}
// CONCATENATION over one box of the output (a dispatch binds at most a few
// inputs; engine/gpu/kernels/shape.py splits the output along the axis).
// Modes:
// - axis:   concat along b, h or w: whole vec4 from the input that owns the
//           output coordinate `a` (same channels everywhere);
// - slices: channel concat, every input but the last has C % 4 == 0: whole
//           vec4 from the input that owns output slice s;
// - lanes:  channel concat, other channel counts: one read per lane.
// Padded lanes (c >= C) are written as 0, after the epilogue.

{{ bindings.dst }}
{% for p in parts %}
{{ bindings["in" ~ loop.index0] }}
{% endfor %}
{{ ep.declare(steps, bindings) }}

@compute @workgroup_size({{ workgroup_size[0] }})
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
{{ grid.decode(box) }}
  let x0 = x;
  for (var k = 0u; k < {{ box.bx }}u; k++) {
    let x = x0 + k;
{% if box.ragged %}
    if (x >= {{ box.x_end }}u) { break; }
{% endif %}
    var v = vec4<T>(0.0);
{% if mode == "lanes" %}
{% for l in range(4) %}
    {
      let c = s * 4u + {{ l }}u;
{% for p in parts %}
      {% if not loop.first %}else {% endif %}if (c < {{ p.end }}u) {
        let cc = c - {{ p.off }}u;
        v[{{ l }}] = in{{ loop.index0 }}[(cc / 4u * {{ p.rows }}u + row) * {{ p.w }}u + x][cc % 4u];
      }
{% endfor %}
    }
{% endfor %}
{% else %}
    let a = {{ "s" if mode == "slices" else axis_var }};
{% for p in parts %}
    {% if not loop.first %}else {% endif %}{% if not loop.last %}if (a < {{ p.end }}u) {% endif %}{
      v = in{{ loop.index0 }}[((s - {{ p.o[3] }}u) * {{ p.rows }}u + (b - {{ p.o[0] }}u) * {{ p.h }}u + h - {{ p.o[1] }}u) * {{ p.w }}u + x - {{ p.o[2] }}u];
    }
{% endfor %}
{% endif %}
{{ ep.apply(steps) }}
{{ tensor.zero_padded_lanes(out_c) }}
    dst[out_index + k] = v;
  }
}
