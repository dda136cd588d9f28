// The face's landmark crop (one invocation; engine/vision/gpu_holistic.py; solutions/
// holistic.py's _face_roi and _tracked_or are its numpy twin), after the face detector ran
// inside the pose's face region (holistic_roi.wgsl):
// 1. with a body (gates[0]) and a detection: the best detection's keypoints' box, rotated
//    by keypoints START -> END, RectTransformation (roi.FACE_FROM_DETECTION_ROI): the
//    re-crop ROI;
// 2. RoiTrackingCalculator: when the previous frame kept a face, its ROI from those
//    landmarks (every landmark's box, rotated by LM_START -> LM_END, tracking.
//    LANDMARKS_ROI) stays instead while it passes the checks (tracking.FACE_TRACKING);
// 3. the face model's slot (track_rect.wgsl crop_record; valid 0: no face crop) and
//    gate (gates[5]: 0 none, 1 the re-crop ROI, 2 the tracked one).

{{ bindings.detections }}
{{ bindings.det_status }}
{{ bindings.face_params }}
{{ bindings.previous }}
{{ bindings.gates }}
{{ bindings.face_slot }}

{% include "vision/track_rect.wgsl" %}

const FRAME_PX: u32 = {{ frame_px }}u;  // word offset of a record's frame-pixel section
const KEYPOINTS: u32 = {{ keypoints }}u;
const START: u32 = {{ start }}u;
const END: u32 = {{ end }}u;
const TARGET: f32 = {{ target }};
const SCALE: vec2<f32> = vec2<f32>({{ scale_x }}, {{ scale_y }});
const SHIFT: vec2<f32> = vec2<f32>({{ shift_x }}, {{ shift_y }});
const SQUARE: u32 = {{ square }}u;
const N: u32 = {{ n }}u;               // the face's landmarks
const PREVIOUS: u32 = {{ previous }}u;  // the face's head in `previous`, its landmarks after
const LM_START: u32 = {{ lm_start }}u;
const LM_END: u32 = {{ lm_end }}u;
const LM_TARGET: f32 = {{ lm_target }};
const LM_SCALE: vec2<f32> = vec2<f32>({{ lm_scale_x }}, {{ lm_scale_y }});
const LM_SHIFT: vec2<f32> = vec2<f32>({{ lm_shift_x }}, {{ lm_shift_y }});
const LM_SQUARE: u32 = {{ lm_square }}u;
const REQUIRE: vec4<f32> = vec4<f32>({{ require }});  // (degrees, translation, scale, margin)
const KEEP_ASPECT: bool = {{ keep_aspect }};
const INPUT_ASPECT: f32 = {{ input_aspect }};  // the face model's input height / width

// keypoint j of the best detection (record 0: the decoder writes them best first), pixels
fn keypoint(j: u32) -> vec2<f32> {
  let at = FRAME_PX + 4u + 2u * j;
  return vec2<f32>(detections[at], detections[at + 1u]);
}

fn previous_px(i: u32, frame: vec2<f32>) -> vec2<f32> {
  return previous[PREVIOUS + 1u + i].xy * frame;
}

@compute @workgroup_size(1)
fn main() {
  let frame = face_params[2].xy;
  if (gates[0] == 0u || det_status[0] == 0u) {
    face_slot[3].w = 0.0;
    face_slot[5].x = 0.0;
    gates[5] = 0u;
    return;
  }
  var lo = keypoint(0u);
  var hi = lo;
  for (var j = 1u; j < KEYPOINTS; j++) {
    lo = min(lo, keypoint(j));
    hi = max(hi, keypoint(j));
  }
  let recrop = transform_rect(detection_rect(vec4<f32>(lo, hi), keypoint(START), keypoint(END),
                                             TARGET), SCALE, SHIFT, SQUARE);
  var r = recrop;
  var tracked = false;
  if (previous[PREVIOUS].x > 0.5) {
    // LandmarksToDetection's box (its maxima start at the smallest positive float)
    var plo = previous_px(0u, frame);
    var phi = plo;
    for (var i = 1u; i < N; i++) {
      plo = min(plo, previous_px(i, frame));
      phi = max(phi, previous_px(i, frame));
    }
    phi = max(phi, vec2<f32>(FLOAT_MIN) * frame);
    let prev = transform_rect(detection_rect(vec4<f32>(plo, phi), previous_px(LM_START, frame),
                                             previous_px(LM_END, frame), LM_TARGET),
                              LM_SCALE, LM_SHIFT, LM_SQUARE);
    tracked = tracking_rects_agree(prev, recrop, REQUIRE);
    for (var i = 0u; i < N && tracked; i++) {
      tracked = tracking_contains(recrop, previous_px(i, frame), REQUIRE);
    }
    if (tracked) {
      r = prev;
    }
  }
  let record = crop_record(r, KEEP_ASPECT, INPUT_ASPECT, tracked, frame);
  for (var j = 0u; j < 6u; j++) {
    face_slot[j] = record[j];
  }
  gates[5] = select(1u, 2u, tracked);
}
