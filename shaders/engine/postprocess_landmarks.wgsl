{% include "common.wgsl" %}
// Landmarks -> frame coordinates: the landmark tensor (N points x DIMS values in the crop's
// pixels, PHWC4 of a [1, 1, 1, N * DIMS] tensor: value c at vec4 c / 4, lane c % 4) through
// the ROI's frame_from_tensor, plus the presence flag -> DrawIndirect args.
// points[i]            = (x, y, z, 1) in frame pixels (z scaled like x: z / IN_W * crop width)
// points[NORM_OFFSET+i] = (x / frame w, y / frame h, z / frame w, 1)
// status = (sigmoid(flag), present 1 / 0, roi valid 1 / 0, 0); args = (VERTEX_COUNT,
// N when present else 0, 0, 0).

struct Roi {
  m0: vec4<f32>,    // frame_from_tensor rows
  m1: vec4<f32>,
  inv0: vec4<f32>,
  inv1: vec4<f32>,
  rect: vec4<f32>,  // centre x, y, width, height (frame pixels)
  info: vec4<f32>,  // rotation, valid, frame width, frame height
};

{{ bindings.landmarks }}
{{ bindings.flag }}
{{ bindings.roi }}
{{ bindings.points }}
{{ bindings.args }}
{{ bindings.status }}

const N: u32 = {{ n }}u;
const DIMS: u32 = {{ dims }}u;
const IN_W: f32 = {{ in_w }};
const IN_H: f32 = {{ in_h }};
const NORM_OFFSET: u32 = {{ norm_offset }}u;
const VERTEX_COUNT: u32 = {{ vertex_count }}u;
const THRESHOLD: f32 = {{ threshold }};
const REQUIRE_VALID_ROI: bool = {{ require_valid_roi }};

fn value(c: u32) -> f32 {
  let v = landmarks[c / 4u];
  return f32(v[c % 4u]);
}

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  let i = gid.x;
  if (i == 0u) {
    let x = clamp(f32(flag[0].x), -80.0, 80.0);
    let presence = 1.0 / (1.0 + exp(-x));
    let valid = roi.info.y > 0.5;
    let present = presence > THRESHOLD && (valid || !REQUIRE_VALID_ROI);
    status[0] = presence;
    status[1] = select(0.0, 1.0, present);
    status[2] = select(0.0, 1.0, valid);
    status[3] = 0.0;
    args[0] = VERTEX_COUNT;
    args[1] = select(0u, N, present);
    args[2] = 0u;
    args[3] = 0u;
  }
  if (i >= N) { return; }
  let uv = vec3<f32>(value(i * DIMS) / IN_W, value(i * DIMS + 1u) / IN_H, 1.0);
  var z = 0.0;
  if (DIMS > 2u) { z = value(i * DIMS + 2u) / IN_W * length(vec2<f32>(roi.m0.x, roi.m1.x)); }
  let px = vec2<f32>(dot(roi.m0.xyz, uv), dot(roi.m1.xyz, uv));
  points[i] = vec4<f32>(px, z, 1.0);
  let frame = roi.info.zw;
  points[NORM_OFFSET + i] = vec4<f32>(px / frame, z / frame.x, 1.0);
}
