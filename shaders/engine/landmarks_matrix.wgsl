{% include "common.wgsl" %}
// MediaPipe's Landmarks2TransformMatrix V2 (engine/gpu/kernels/landmarks_matrix.py): the
// 4x4 matrix of a sub-crop from landmarks [1, N, 3] (vec4 i = landmark i), in f32.
// Matrix = Shift(centre) Rot(-r) Scale(sx, sy) Shift(-out_w / 2, -out_h / 2), r the
// rotation that levels the L -> R line (plus the target), (sx, sy) the subset's box size
// after rotating by r, times scale / output size, the centre that box's, rotated back.

{{ bindings.landmarks }}
{{ bindings.matrix }}

var<private> SUBSET: array<u32, {{ subset | length }}> = array<u32, {{ subset | length }}>({{ subset | join("u, ") }}u);

fn point(i: u32) -> vec2<f32> {
  return vec2<f32>(landmarks[i].xy);
}

@compute @workgroup_size({{ workgroup_size[0] }})
fn main() {
  // cos and sin of a = atan2(d.y, d.x), then of r = target - a
  let d = point({{ right }}u) - point({{ left }}u);
  let len = length(d);
  var u = vec2<f32>(1.0, 0.0);
  if (len > 0.0) { u = d / len; }
  let ct: f32 = {{ cos_target }};
  let st: f32 = {{ sin_target }};
  let c = ct * u.x + st * u.y;
  let s = st * u.x - ct * u.y;
  // the subset rotated by r: its box, from the first point on
  let p0 = point(SUBSET[0]);
  var lo = vec2<f32>(c * p0.x - s * p0.y, s * p0.x + c * p0.y);
  var hi = lo;
  for (var k = 1u; k < {{ subset | length }}u; k++) {
    let p = point(SUBSET[k]);
    let q = vec2<f32>(c * p.x - s * p.y, s * p.x + c * p.y);
    lo = min(lo, q);
    hi = max(hi, q);
  }
  let size = hi - lo;
  let mid = (lo + hi) * 0.5;
  let centre = vec2<f32>(c * mid.x + s * mid.y, -s * mid.x + c * mid.y);  // Rot(-r) mid
  let sx = {{ scale_x }} * size.x / {{ out_w }};
  let sy = {{ scale_y }} * size.y / {{ out_h }};
  // Rot(-r) Scale = [[c sx, s sy], [-s sx, c sy]], then the shift by -out / 2
  let half = vec2<f32>({{ out_w }}, {{ out_h }}) * -0.5;
  let row0 = vec4<f32>(c * sx, s * sy, 0.0, centre.x + c * sx * half.x + s * sy * half.y);
  let row1 = vec4<f32>(-s * sx, c * sy, 0.0, centre.y - s * sx * half.x + c * sy * half.y);
  matrix[0] = vec4<T>(row0);
  matrix[1] = vec4<T>(row1);
  matrix[2] = vec4<T>(0.0, 0.0, 1.0, 0.0);
  matrix[3] = vec4<T>(0.0, 0.0, 0.0, 1.0);
}
