// What each of the body's filters does this frame (one invocation; engine/vision/gpu_pose.py;
// BodyTracker._decode, _lost and smoothing.py are its numpy twin). A smoother's filters
// (one OneEuroFilter per landmark and axis) are made, reset and applied together, so they
// share one clock: OneEuroFilter::Apply's time step, decided here once per smoother.
// state (vec4<u32>): per smoother [LANDMARKS, WORLD, AUX] (running 1 / fresh 0, last time
// in ns: low word, high word, frequency as f32 bits); [3] (visibility filters running,
// a previous mask kept, 0, 0). A fresh filter's last time is INT64_MIN.
// steps (vec4<f32>, read by pose_smooth.wgsl and pose_mask.wgsl): per smoother (mode: 0 the
// value passes, 1 the first value (it passes, the filters start), 2 filtered; frequency;
// value scale; 0); [3] (visibility: 0 passes, 1 first, 2 filtered; mask: 0 not made,
// 1 as it is, 2 mixed with the previous one; 0, 0).
// - the landmark and visibility filters and the world filter run on a kept body when
//   SMOOTH, the auxiliary points' filter when TRACKING; the landmark and auxiliary ones
//   scale values by 1 / the object scale (the auxiliary points' alignment rect side, px)
//   and pass them when it is under MIN_SCALE;
// - a frame without a body resets the landmark and auxiliary filters (their calculators
//   take IMAGE_SIZE: they run on the empty frame); the visibility and world filters keep
//   their state, as the mask does.

struct Clock { time: vec4<u32> };  // this frame's time in ns: (low word, high word, 0, 0)

{{ bindings.body }}
{{ bindings.slot }}
{{ bindings.clock }}
{{ bindings.state }}
{{ bindings.steps }}

const AUX0: u32 = 1u + {{ aux }}u;  // the auxiliary points' body records: AUX0, AUX0 + 1
const LANDMARKS: u32 = 0u;
const WORLD: u32 = 1u;
const AUX: u32 = 2u;
const SMOOTH: bool = {{ smooth }};
const TRACKING: bool = {{ tracking }};
const SEGMENTATION: bool = {{ segmentation }};
const SMOOTH_SEGMENTATION: bool = {{ smooth_segmentation }};
const FREQUENCY: f32 = {{ frequency }};   // a new filter's
const MIN_SCALE: f32 = {{ min_scale }};   // min_allowed_object_scale

// a - b of two int64 as (low, high) words
fn sub64(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
  return vec2<u32>(a.x - b.x, a.y - b.y - select(0u, 1u, a.x < b.x));
}

// OneEuroFilter::Apply's clock for one smoother: the value passes when its time is not after
// the last one; the frequency follows the time step unless either time is 0.
fn step(s: u32, runs: bool, value_scale: f32) -> vec4<f32> {
  let h = state[s];
  let frequency = bitcast<f32>(h.w);
  if (!runs) {
    return vec4<f32>(0.0, frequency, value_scale, 0.0);
  }
  let now = clock.time.xy;
  if (h.x == 0u) {
    state[s] = vec4<u32>(1u, now, h.w);
    return vec4<f32>(1.0, frequency, value_scale, 0.0);
  }
  let dt = sub64(now, h.yz);
  if (bitcast<i32>(dt.y) < 0 || all(dt == vec2<u32>(0u))) {
    return vec4<f32>(0.0, frequency, value_scale, 0.0);
  }
  var f = frequency;
  if (any(h.yz != vec2<u32>(0u)) && any(now != vec2<u32>(0u))) {
    f = 1e9 / (f32(dt.y) * 4294967296.0 + f32(dt.x));
  }
  state[s] = vec4<u32>(1u, now, bitcast<u32>(f));
  return vec4<f32>(2.0, f, value_scale, 0.0);
}

@compute @workgroup_size(1)
fn main() {
  let kept = body[0].x > 0.5;
  let fresh = vec4<u32>(0u, 0u, 0u, bitcast<u32>(FREQUENCY));
  // the object scale: the unfiltered auxiliary points' alignment rect (a square of side
  // twice their distance, in pixels), (width + height) / 2
  let frame = slot[5].yz;
  let side = 2.0 * length((body[AUX0 + 1u].xy - body[AUX0].xy) * frame);
  let scaled = side >= MIN_SCALE;
  let value_scale = 1.0 / side;
  steps[LANDMARKS] = step(LANDMARKS, kept && SMOOTH && scaled, value_scale);
  steps[WORLD] = step(WORLD, kept && SMOOTH, 1.0);
  steps[AUX] = step(AUX, kept && TRACKING && scaled, value_scale);
  if (!kept) {
    state[LANDMARKS] = fresh;
    state[AUX] = fresh;
  }
  var other = state[3];
  var visibility = 0.0;
  if (kept && SMOOTH) {
    visibility = select(1.0, 2.0, other.x == 1u);
    other.x = 1u;
  }
  var mask = 0.0;
  if (kept && SEGMENTATION) {
    mask = select(1.0, 2.0, SMOOTH_SEGMENTATION && other.y == 1u);
    other.y = select(0u, 1u, SMOOTH_SEGMENTATION);
  }
  state[3] = other;
  steps[3] = vec4<f32>(visibility, mask, 0.0, 0.0);
}
