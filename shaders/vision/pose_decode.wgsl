{% include "common.wgsl" %}
// The body crop's outputs -> the raw body in frame coordinates (one thread a landmark;
// engine/vision/gpu_pose.py; BodyTracker._decode and landmarks.py are its numpy twin):
// MediaPipe's pose_landmark_by_roi graph: the body is kept when its flag > THRESHOLD
// (strict) and the crop had a ROI; TensorsToLandmarks (x / W, y / H, z / W, sigmoid of the
// visibility and presence), RefineLandmarksFromHeatmap (KERNEL cells), LandmarkLetterbox-
// Removal (the slot's padding), LandmarkProjection (the slot's rect), WorldLandmark-
// Projection (rotation only).
// body record (vec4): [0] (kept 1 / 0, flag, tracked, detections used); [1 .. N] the N
// landmarks normalised by the frame (x, y, z, visibility); [1 + N .. N + BODY] the BODY
// world landmarks (x, y, z, presence).

{{ bindings.landmarks }}
{{ bindings.flag }}
{{ bindings.heatmap }}
{{ bindings.world }}
{{ bindings.slot }}
{{ bindings.body }}

const N: u32 = {{ n }}u;          // landmarks: the body's, then the auxiliary points
const BODY: u32 = {{ body }}u;    // the body's (world landmarks too)
const DIMS: u32 = 5u;             // x, y, z, visibility, presence
const IN_W: f32 = {{ in_w }};
const IN_H: f32 = {{ in_h }};
const HM_W: i32 = {{ hm_w }};
const HM_H: i32 = {{ hm_h }};
const HALF: i32 = {{ half }};     // (kernel size - 1) / 2
const MIN_CONFIDENCE: f32 = {{ min_confidence }};
const THRESHOLD: f32 = {{ threshold }};

fn lane(v: vec4<T>, c: u32) -> f32 {
  return f32(v[c % 4u]);
}

fn logistic(x: f32) -> f32 {
  return 1.0 / (1.0 + exp(-x));  // exp overflows to inf for x < -88: 0, as it should
}

fn value(v: u32) -> f32 {
  return lane(landmarks[v / 4u], v);
}

// heatmap channel i at cell (x, y): PHWC4, slice i / 4 holds H * W vec4
fn heat(i: u32, x: i32, y: i32) -> f32 {
  let at = (i / 4u) * u32(HM_W * HM_H) + u32(y * HM_W + x);
  return lane(heatmap[at], i);
}

// the landmark's (x, y) in the crop moved to the sigmoid-weighted mean cell of its channel
// around it when the window's best confidence >= MIN_CONFIDENCE; cells are integer indices
// and the centre cell truncates toward zero, as the C++ does
fn refine(p: vec2<f32>, i: u32) -> vec2<f32> {
  let cell = vec2<i32>(i32(p.x * f32(HM_W)), i32(p.y * f32(HM_H)));
  if (any(cell < vec2<i32>(0)) || cell.x >= HM_W || cell.y >= HM_H) {
    return p;
  }
  let lo = max(cell - vec2<i32>(HALF), vec2<i32>(0));
  let hi = min(cell + vec2<i32>(HALF + 1), vec2<i32>(HM_W, HM_H));
  var total = 0.0;
  var best = 0.0;
  var mean = vec2<f32>(0.0);
  for (var y = lo.y; y < hi.y; y++) {
    for (var x = lo.x; x < hi.x; x++) {
      let c = logistic(heat(i, x, y));
      total += c;
      best = max(best, c);
      mean += vec2<f32>(f32(x), f32(y)) * c;
    }
  }
  if (best >= MIN_CONFIDENCE && total > 0.0) {
    return mean / vec2<f32>(f32(HM_W), f32(HM_H)) / total;
  }
  return p;
}

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  let i = gid.x;
  let rect = slot[2];    // centre, size (px)
  let rot = slot[3];     // rotation, cos, sin, valid
  let pad = slot[4];     // left, top, right, bottom
  let frame = slot[5].yz;
  if (i == 0u) {
    let score = lane(flag[0], 0u);
    let kept = rot.w > 0.5 && score > THRESHOLD;
    body[0] = vec4<f32>(select(0.0, 1.0, kept), score, slot[5].x, slot[5].w);
  }
  if (i >= N) {
    return;
  }
  let v = DIMS * i;
  let raw = vec3<f32>(value(v) / IN_W, value(v + 1u) / IN_H, value(v + 2u) / IN_W);
  let p = refine(raw.xy, i);
  let sx = 1.0 - pad.x - pad.z;
  let q = vec3<f32>((p.x - pad.x) / sx, (p.y - pad.y) / (1.0 - pad.y - pad.w), raw.z / sx);
  let x = q.x - 0.5;
  let y = q.y - 0.5;
  let size = rect.zw / frame;
  let centre = rect.xy / frame;
  let c = rot.y;
  let s = rot.z;
  body[1u + i] = vec4<f32>((c * x - s * y) * size.x + centre.x,
                           (s * x + c * y) * size.y + centre.y, q.z * size.x,
                           logistic(value(v + 3u)));
  if (i < BODY) {
    let w = 3u * i;
    let m = vec3<f32>(lane(world[w / 4u], w), lane(world[(w + 1u) / 4u], w + 1u),
                      lane(world[(w + 2u) / 4u], w + 2u));
    body[1u + N + i] = vec4<f32>(c * m.x - s * m.y, s * m.x + c * m.y, m.z,
                                 logistic(value(v + 4u)));
  }
}
