// The end of a hands frame on the GPU (one invocation; engine/vision/gpu_hands.py):
// - the kept hands, in the slots' (association's) order -> what an app draws: their
//   landmarks in frame pixels (`points`, N vec4 each, w = 1), their handedness (`labels`:
//   vec4 (p, label index: 0 "Left" when p > 0.5 else 1 "Right", flag, 0) per hand),
//   DrawIndirect args for skeletons' segments (PAIRS per hand) and dots;
// - each kept hand's next ROI (`tracked`, read by track_associate.wgsl next frame):
//   HandLandmarksToRectCalculator (the rotated box of the partial landmark set), then
//   RectTransformation (roi.HAND_LANDMARKS_ROI); none when not TRACKING;
// - the tally: (hands, detections used, slots, 0), the small read of a frame.

{{ bindings.slots }}
{{ bindings.status }}
{{ bindings.hands }}
{{ bindings.tracked }}
{{ bindings.points }}
{{ bindings.labels }}
{{ bindings.args }}
{{ bindings.tally }}
{{ bindings.gates }}  // u32: [0] whether the next frame's palm detector runs

{% include "vision/track_rect.wgsl" %}

const N: u32 = {{ n }}u;
const SLOTS: u32 = {{ slots }}u;
const MAX_OBJECTS: u32 = {{ max_objects }}u;
const SLOT_VEC4: u32 = 6u;
const HAND_VEC4: u32 = 1u + 2u * N;
const TRACKING: bool = {{ tracking }};
const PAIRS: u32 = {{ pairs }}u;
const SCALE: vec2<f32> = vec2<f32>({{ scale_x }}, {{ scale_y }});
const SHIFT: vec2<f32> = vec2<f32>({{ shift_x }}, {{ shift_y }});
const SQUARE: u32 = {{ square }}u;
// a kept hand's landmarks in pixels (hand_rect, track_rect.wgsl, takes them)
fn landmarks_px(k: u32, frame: vec2<f32>) -> array<vec2<f32>, 21> {
  var p: array<vec2<f32>, 21>;
  for (var i = 0u; i < 21u; i++) {
    p[i] = hands[k * HAND_VEC4 + 1u + i].xy * frame;
  }
  return p;
}

@compute @workgroup_size(1)
fn main() {
  let n_slots = min(status[0], SLOTS);
  var kept = 0u;
  for (var k = 0u; k < n_slots; k++) {
    let head = hands[k * HAND_VEC4];
    if (head.x < 0.5) {
      continue;
    }
    let frame = slots[k * SLOT_VEC4 + 5u].yz;
    for (var i = 0u; i < N; i++) {
      let q = hands[k * HAND_VEC4 + 1u + i];
      points[kept * N + i] = vec4<f32>(q.xy * frame, q.z * frame.x, 1.0);
    }
    labels[kept] = vec4<f32>(head.z, select(1.0, 0.0, head.z > 0.5), head.y, 0.0);
    if (TRACKING) {
      let r = transform_rect(hand_rect(landmarks_px(k, frame), frame), SCALE, SHIFT, SQUARE);
      tracked[1u + 2u * kept] = vec4<f32>(r.centre, r.size);
      tracked[2u + 2u * kept] = vec4<f32>(r.rotation, 0.0, 0.0, 0.0);
    }
    kept++;
  }
  let n_tracked = select(0u, kept, TRACKING);
  tracked[0] = vec4<f32>(f32(n_tracked), 0.0, 0.0, 0.0);
  // the next frame's detections count only with fewer hands tracked (track_associate.wgsl):
  // only then does its palm detector run
  gates[0] = select(0u, 1u, n_tracked < MAX_OBJECTS);
  args[0] = 6u;  // segments: 6 vertices each, one instance per (hand, pair)
  args[1] = kept * PAIRS;
  args[2] = 0u;
  args[3] = 0u;
  args[4] = 6u;  // dots: one instance per (hand, landmark)
  args[5] = kept * N;
  args[6] = 0u;
  args[7] = 0u;
  tally[0] = kept;
  tally[1] = status[1];
  tally[2] = n_slots;
  tally[3] = 0u;
}
