{% include "common.wgsl" %}
// The body's segmentation in the frame (one thread a frame pixel; engine/vision/gpu_pose.py;
// BodyTracker._mask and smoothing.smooth_mask are its numpy/OpenCV twin): the sigmoid of the
// model's logits warped back from the crop (cv2.warpAffine with WARP_INVERSE_MAP: bilinear
// at the exact source coordinate, as the CPU path's OpenCV does for a float image; measured
// within 3e-5 of it on the same logits; 0 outside the crop), then, as pose_clock.wgsl's
// step says, mixed with the previous frame's mask where the new one is uncertain (RATIO;
// SegmentationSmoothingCalculator). `mask` holds the last mask until a body is found again.

{{ bindings.logits }}
{{ bindings.slot }}
{{ bindings.steps }}
{{ bindings.mask }}

const MW: i32 = {{ mw }};  // the model's mask (PHWC4, one slice: vec4 y * MW + x, lane 0)
const MH: i32 = {{ mh }};
const RATIO: f32 = {{ ratio }};
// SegmentationSmoothingCalculator's fit of the binary entropy (smoothing.UNCERTAINTY_POLY)
const C: array<f32, 5> = array<f32, 5>({{ poly }});

fn probability(p: vec2<i32>) -> f32 {
  if (any(p < vec2<i32>(0)) || p.x >= MW || p.y >= MH) {
    return 0.0;
  }
  return 1.0 / (1.0 + exp(-f32(logits[p.y * MW + p.x].x)));
}

@compute @workgroup_size(8, 8, 1)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  let mode = u32(steps[3].y);
  let frame = vec2<u32>(slot[5].yz);
  if (mode == 0u || gid.x >= frame.x || gid.y >= frame.y) {
    return;
  }
  // the frame pixel in the crop: the inverse of frame_from_tensor, in mask pixels
  let m0 = slot[0].xyz;
  let m1 = slot[1].xyz;
  let d = vec2<f32>(f32(gid.x) - m0.z, f32(gid.y) - m1.z);
  let det = m0.x * m1.y - m0.y * m1.x;
  let uv = vec2<f32>(m1.y * d.x - m0.y * d.y, m0.x * d.y - m1.x * d.x) / det;
  let src = uv * vec2<f32>(f32(MW), f32(MH));
  let base = floor(src);
  let i = vec2<i32>(base);
  let f = src - base;
  let top = mix(probability(i), probability(i + vec2<i32>(1, 0)), f.x);
  let bottom = mix(probability(i + vec2<i32>(0, 1)), probability(i + vec2<i32>(1, 1)), f.x);
  var p = mix(top, bottom, f.y);
  let at = gid.y * frame.x + gid.x;
  if (mode == 2u) {
    let t = p - 0.5;
    let x = t * t;
    let fit = x * (C[0] + x * (C[1] + x * (C[2] + x * (C[3] + x * C[4]))));
    let uncertainty = 1.0 - min(1.0, fit);
    p = p + (mask[at] - p) * (uncertainty * RATIO);
  }
  mask[at] = p;
}
