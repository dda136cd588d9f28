// Holistic's crops from the pose (one invocation; engine/vision/gpu_holistic.py; solutions/
// holistic.py's _hand_rois and _face_roi are its numpy twin), after the pose's passes:
// 1. each hand (side 0 the subject's left: pose landmarks 15, 17, 19; side 1 the right)
//    when there is a body and its wrist's smoothed visibility > VISIBILITY:
//    HandDetectionsFromPoseToRects (centred on (2 index + pinky) / 3, side twice its
//    distance to the wrist, upright along wrist -> that point), RectTransformation
//    (roi.HAND_FROM_POSE_ROI) -> the re-crop model's slot (aspect kept);
// 2. the face, when there is a body: the box of the pose's FACE_POINTS face landmarks,
//    rotated by FACE_START -> FACE_END, RectTransformation (roi.FACE_FROM_POSE_ROI),
//    grown to the face detector's aspect (PadRoi): its frame_from_tensor rows and the
//    frame size, the 48 bytes the detector's pre-process and decoder read (copied there);
// 3. the gates of the models that follow: [0] the face detector, [1 + side] the re-crop.
// recrop_slots: per side a slot record (track_rect.wgsl crop_record; valid 0: none).

{{ bindings.pose }}
{{ bindings.pose_slot }}
{{ bindings.recrop_slots }}
{{ bindings.face_params }}
{{ bindings.gates }}

{% include "vision/track_rect.wgsl" %}

const BODY: u32 = {{ body }}u;
// (wrist, pinky, index) of each side
const SIDES = array<vec3<u32>, 2>(vec3<u32>({{ left }}), vec3<u32>({{ right }}));
const VISIBILITY: f32 = {{ visibility }};
const HAND_SCALE: vec2<f32> = vec2<f32>({{ hand_scale_x }}, {{ hand_scale_y }});
const HAND_SHIFT: vec2<f32> = vec2<f32>({{ hand_shift_x }}, {{ hand_shift_y }});
const HAND_SQUARE: u32 = {{ hand_square }}u;
const RECROP_ASPECT: f32 = {{ recrop_aspect }};  // the re-crop model's input height / width
const FACE_POINTS: u32 = {{ face_points }}u;
const FACE_START: u32 = {{ face_start }}u;
const FACE_END: u32 = {{ face_end }}u;
const FACE_TARGET: f32 = {{ face_target }};
const FACE_SCALE: vec2<f32> = vec2<f32>({{ face_scale_x }}, {{ face_scale_y }});
const FACE_SHIFT: vec2<f32> = vec2<f32>({{ face_shift_x }}, {{ face_shift_y }});
const FACE_SQUARE: u32 = {{ face_square }}u;
const DETECTOR_ASPECT: f32 = {{ detector_aspect }};  // the face detector's input h / w
const SLOT_VEC4: u32 = 6u;

// pose landmark i in frame pixels (the pose record: [1 .. BODY] normalised, smoothed)
fn landmark(i: u32, frame: vec2<f32>) -> vec2<f32> {
  return pose[1u + i].xy * frame;
}

// roi.hand_rect_from_pose in pixels
fn hand_rect_from_pose(wrist: vec2<f32>, pinky: vec2<f32>, index: vec2<f32>) -> Rect {
  let m = (2.0 * index + pinky) / 3.0;
  let v = m - wrist;
  return Rect(m, vec2<f32>(2.0 * length(v)), normalize_radians(PI / 2.0 - atan2(-v.y, v.x)));
}

@compute @workgroup_size(1)
fn main() {
  let frame = pose_slot[5].yz;
  let body = pose[0].x > 0.5;
  for (var side = 0u; side < 2u; side++) {
    let p = SIDES[side];
    let at = side * SLOT_VEC4;
    if (body && pose[1u + p.x].w > VISIBILITY) {
      let r = hand_rect_from_pose(landmark(p.x, frame), landmark(p.y, frame),
                                  landmark(p.z, frame));
      let record = crop_record(transform_rect(r, HAND_SCALE, HAND_SHIFT, HAND_SQUARE), true,
                               RECROP_ASPECT, false, frame);
      for (var j = 0u; j < SLOT_VEC4; j++) {
        recrop_slots[at + j] = record[j];
      }
      gates[1u + side] = 1u;
    } else {
      recrop_slots[at + 3u].w = 0.0;
      gates[1u + side] = 0u;
    }
  }
  face_params[2] = vec4<f32>(frame, 1.0 / frame);
  gates[0] = select(0u, 1u, body);
  if (!body) {
    return;
  }
  // LandmarksToDetection's box (its maxima start at the smallest positive float)
  var lo = landmark(0u, frame);
  var hi = lo;
  for (var i = 1u; i < FACE_POINTS; i++) {
    let q = landmark(i, frame);
    lo = min(lo, q);
    hi = max(hi, q);
  }
  hi = max(hi, vec2<f32>(FLOAT_MIN) * frame);
  let r = detection_rect(vec4<f32>(lo, hi), landmark(FACE_START, frame),
                         landmark(FACE_END, frame), FACE_TARGET);
  let record = crop_record(transform_rect(r, FACE_SCALE, FACE_SHIFT, FACE_SQUARE), true,
                           DETECTOR_ASPECT, false, frame);
  face_params[0] = record[0];
  face_params[1] = record[1];
}
