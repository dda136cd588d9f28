{% include "common.wgsl" %}
// One hand's re-crop outputs -> its landmark crop (one invocation per side; engine/vision/
// gpu_holistic.py; solutions/holistic.py's _hand_rois and _tracked_or are its numpy twin):
// 1. hand_recrop's two points (x / W, y / H), the letterbox removed, projected through
//    the side's re-crop slot -> AlignmentPointsRects (roi.HAND_RECROP_ROI), RectTransfor-
//    mation: the re-crop ROI;
// 2. RoiTrackingCalculator: when the previous frame kept this hand, its ROI from those
//    landmarks (HandLandmarksToRect, roi.HAND_LANDMARKS_ROI) stays instead while it passes
//    the checks against the re-crop ROI (tracking.HAND_TRACKING);
// 3. the hand model's slot ([5].x: 1 tracked) and gate (gates[3 + side]:
//    0 no crop, 1 the re-crop ROI, 2 the tracked one). No re-crop slot: no hand slot.
// previous (holistic_finish.wgsl): per side 1 + N vec4, (kept, 0, 0, 0) then the
// landmarks normalised.

struct Side { index: vec4<u32> };

{{ bindings.crop }}
{{ bindings.recrop_slots }}
{{ bindings.previous }}
{{ bindings.side }}
{{ bindings.hand_slots }}
{{ bindings.gates }}

{% include "vision/track_rect.wgsl" %}

const N: u32 = 21u;
const IN_W: f32 = {{ in_w }};  // the re-crop model's input
const IN_H: f32 = {{ in_h }};
const RECROP_TARGET: f32 = {{ recrop_target }};
const RECROP_SCALE: vec2<f32> = vec2<f32>({{ recrop_scale_x }}, {{ recrop_scale_y }});
const RECROP_SHIFT: vec2<f32> = vec2<f32>({{ recrop_shift_x }}, {{ recrop_shift_y }});
const RECROP_SQUARE: u32 = {{ recrop_square }}u;
const NEXT_SCALE: vec2<f32> = vec2<f32>({{ next_scale_x }}, {{ next_scale_y }});
const NEXT_SHIFT: vec2<f32> = vec2<f32>({{ next_shift_x }}, {{ next_shift_y }});
const NEXT_SQUARE: u32 = {{ next_square }}u;
const KEEP_ASPECT: bool = {{ keep_aspect }};
const HAND_ASPECT: f32 = {{ hand_aspect }};  // the hand model's input height / width
// (rotation degrees, translation, scale, margin)
const REQUIRE: vec4<f32> = vec4<f32>({{ require }});
const SLOT_VEC4: u32 = 6u;

fn lane(v: vec4<T>, c: u32) -> f32 {
  return f32(v[c % 4u]);
}

// re-crop point j in frame pixels: LandmarkLetterboxRemoval, LandmarkProjection
fn point(j: u32, at: u32) -> vec2<f32> {
  let rect = recrop_slots[at + 2u];
  let rot = recrop_slots[at + 3u];
  let pad = recrop_slots[at + 4u];
  let raw = vec2<f32>(lane(crop[(2u * j) / 4u], 2u * j) / IN_W,
                      lane(crop[(2u * j + 1u) / 4u], 2u * j + 1u) / IN_H);
  let q = (raw - pad.xy) / (1.0 - pad.xy - pad.zw) - 0.5;
  return vec2<f32>(rot.y * q.x - rot.z * q.y, rot.z * q.x + rot.y * q.y) * rect.zw + rect.xy;
}

@compute @workgroup_size(1)
fn main() {
  let k = side.index.x;
  let at = k * SLOT_VEC4;
  if (recrop_slots[at + 3u].w < 0.5) {
    hand_slots[at + 3u].w = 0.0;
    hand_slots[at + 5u].x = 0.0;
    gates[3u + k] = 0u;
    return;
  }
  let frame = recrop_slots[at + 5u].yz;
  let recrop = transform_rect(alignment_rect(point(0u, at), point(1u, at), RECROP_TARGET),
                              RECROP_SCALE, RECROP_SHIFT, RECROP_SQUARE);
  var r = recrop;
  var tracked = false;
  let prev_at = k * (1u + N);
  if (previous[prev_at].x > 0.5) {
    var p: array<vec2<f32>, 21>;
    for (var i = 0u; i < N; i++) {
      p[i] = previous[prev_at + 1u + i].xy * frame;
    }
    let prev = transform_rect(hand_rect(p, frame), NEXT_SCALE, NEXT_SHIFT, NEXT_SQUARE);
    tracked = tracking_rects_agree(prev, recrop, REQUIRE);
    for (var i = 0u; i < N && tracked; i++) {
      tracked = tracking_contains(recrop, p[i], REQUIRE);
    }
    if (tracked) {
      r = prev;
    }
  }
  let record = crop_record(r, KEEP_ASPECT, HAND_ASPECT, tracked, frame);
  for (var j = 0u; j < SLOT_VEC4; j++) {
    hand_slots[at + j] = record[j];
  }
  gates[3u + k] = select(1u, 2u, tracked);
}
