{% import "tensor.wgsl" as tensor %}
{#
A BY x BX block of depthwise outputs of one slice, shared by depthwise.wgsl's tiled form
and depthwise_conv1x1.wgsl: accumulators a{oy}_{ox}, the block's input footprint loaded
once (clamped address, zero outside) and every tap unrolled (`plan`: per footprint row,
[(accumulator, footprint column, tap)], engine/gpu/kernels/depthwise.py tile_plan).
The caller defines ix0 and iy0 (i32: the footprint's corner), s (the input slice), the
taps' weights w0, w1, ... and plane (the slice's first vec4: buffers) or in_base (the
image's first texel row: textures). `pad`: the indentation of the caller's scope.
#}
{% macro taps(src, plan, by, bx, foot_w, pad="  ") %}
{% filter trim("\n") %}
{% for oy in range(by) %}{% for ox in range(bx) %}
{{ pad }}var a{{ oy }}_{{ ox }} = vec4<A>(0.0);
{% endfor %}{% endfor %}
{% for c in range(foot_w) %}
{{ pad }}let cx{{ c }} = ix0 + {{ c }};
{{ pad }}let vx{{ c }} = cx{{ c }} >= 0 && cx{{ c }} < IN_W;
{{ pad }}let px{{ c }} = u32(clamp(cx{{ c }}, 0, IN_W - 1));
{% endfor %}
{% for taps in plan %}
{{ pad }}{
{{ pad }}  let cy = iy0 + {{ loop.index0 }};
{{ pad }}  let vy = cy >= 0 && cy < IN_H;
{% if src.kind == "buffer" %}
{{ pad }}  let py = plane + u32(clamp(cy, 0, IN_H - 1) * IN_W);
{% else %}
{{ pad }}  let ty = in_base + u32(clamp(cy, 0, IN_H - 1));
{% endif %}
{% set used = taps | map(attribute=1) | unique | list %}
{% for c in used %}
{{ pad }}  let v{{ c }} = select(vec4<A>(0.0), {{ tensor.load(src, "py + px" ~ c, "px" ~ c, "ty", "s", "A") }}, vy && vx{{ c }});
{% endfor %}
{% for acc, c, t in taps %}
{{ pad }}  {{ acc }} += v{{ c }} * w{{ t }};
{% endfor %}
{{ pad }}}
{% endfor %}
{% endfilter %}
{%- endmacro %}
