// An invocation per BX output vec4 (neighbours along x) over a box of a PHWC4
// tensor, x fastest, then h, b, slice (the buffer's own order, so neighbouring
// invocations write neighbouring vec4). `r` comes from
// engine/gpu/kernels/shape.py:box(). Defines b, h, x (the first of the BX
// pixels), s, row (= b * OUT_H + h) and out_index (the vec4 of pixel x).
{% macro decode(r) %}
  let i = gid.y * {{ r.stride }}u + gid.x;
  if (i >= {{ r.total }}u) { return; }
  let x = i % {{ r.w }}u{{ " * %du" % r.bx if r.bx > 1 else "" }} + {{ r.x0 }}u;
  let i1 = i / {{ r.w }}u;
  let h = i1 % {{ r.h }}u + {{ r.h0 }}u;
  let i2 = i1 / {{ r.h }}u;
  let b = i2 % {{ r.b }}u + {{ r.b0 }}u;
  let s = i2 / {{ r.b }}u + {{ r.s0 }}u;
  let row = b * {{ r.out_h }}u + h;
  let out_index = (s * {{ r.out_rows }}u + row) * {{ r.out_w }}u + x;
{% endmacro %}
