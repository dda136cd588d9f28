// This frame's crop of the body (one invocation; engine/vision/gpu_pose.py; solutions/
// pose.py's BodyTracker over detect_track.py is its numpy twin):
// 1. the ROI tracked from the last frame's filtered auxiliary landmarks (`tracked`, written
//    by pose_finish.wgsl) when there is one; else the detector's best detection's
//    (pose_detection_to_roi: AlignmentPointsRects on keypoints START -> END,
//    RectTransformation), and the detections count; else none (the crop's outputs are
//    ignored);
// 2. its crop: frame_from_tensor of the rect grown to the model input's aspect when
//    KEEP_ASPECT (PadRoi), and the letterbox padding that leaves.
// slot record (6 vec4, track_associate.wgsl's layout): [0], [1] frame_from_tensor rows
// (what preprocess.wgsl reads: the first 32 bytes); [2] centre, size (px); [3] rotation,
// cos, sin, valid; [4] padding (left, top, right, bottom); [5] tracked (1) or detected (0),
// frame w, h, detections used (1) or not.

struct Params {
  row0: vec4<f32>,
  row1: vec4<f32>,
  frame: vec4<f32>,  // (frame width, height, 1 / width, 1 / height)
};

{{ bindings.detections }}
{{ bindings.det_status }}
{{ bindings.params }}
{{ bindings.tracked }}
{{ bindings.slot }}

{% include "vision/track_rect.wgsl" %}

const FRAME_PX: u32 = {{ frame_px }}u;  // word offset of a record's frame-pixel section
const START: u32 = {{ start }}u;        // the alignment keypoints
const END: u32 = {{ end }}u;
const TARGET: f32 = {{ target }};
const SCALE: vec2<f32> = vec2<f32>({{ scale_x }}, {{ scale_y }});
const SHIFT: vec2<f32> = vec2<f32>({{ shift_x }}, {{ shift_y }});
const SQUARE: u32 = {{ square }}u;
const KEEP_ASPECT: bool = {{ keep_aspect }};
const INPUT_ASPECT: f32 = {{ input_aspect }};  // the landmark model's input height / width

// keypoint j of the best detection (record 0: the decoder writes them best first)
fn keypoint(j: u32) -> vec2<f32> {
  let at = FRAME_PX + 4u + 2u * j;
  return vec2<f32>(detections[at], detections[at + 1u]);
}

@compute @workgroup_size(1)
fn main() {
  let frame = params.frame.xy;
  // tracked: vec4 (count, 0, 0, 0), vec4 (centre, size), vec4 (rotation, 0, 0, 0)
  let from_tracking = tracked[0].x > 0.5;
  var r = Rect(tracked[1].xy, tracked[1].zw, tracked[2].x);
  var valid = from_tracking;
  if (!from_tracking && det_status[0] > 0u) {
    r = transform_rect(alignment_rect(keypoint(START), keypoint(END), TARGET), SCALE, SHIFT,
                       SQUARE);
    valid = true;
  }
  let used = select(1.0, 0.0, from_tracking);
  slot[5] = vec4<f32>(select(0.0, 1.0, from_tracking), frame, used);
  if (!valid) {
    slot[3].w = 0.0;
    return;
  }
  var crop = Crop(r.size, vec4<f32>(0.0));
  if (KEEP_ASPECT) {
    crop = pad_roi(r.size, INPUT_ASPECT);
  }
  let c = cos(r.rotation);
  let s = sin(r.rotation);
  let w = crop.size.x;
  let h = crop.size.y;
  slot[0] = vec4<f32>(w * c, -h * s, r.centre.x - 0.5 * w * c + 0.5 * h * s, 0.0);
  slot[1] = vec4<f32>(w * s, h * c, r.centre.y - 0.5 * w * s - 0.5 * h * c, 0.0);
  slot[2] = vec4<f32>(r.centre, r.size);
  slot[3] = vec4<f32>(r.rotation, c, s, 1.0);
  slot[4] = crop.padding;
}
