// The detect-then-track stage's choice of this frame's ROIs, on the GPU (one invocation):
// MediaPipe's AssociationNormRectCalculator over the detections' ROIs, then the tracked
// ones (engine/vision/detect_track.py and tracking.associate_rects are its numpy twin).
// 1. the detector's best MAX_OBJECTS detections count only when fewer than MAX_OBJECTS
//    objects were tracked into this frame (the detector itself always runs on the GPU);
//    each -> a ROI (DetectionsToRects on keypoints START -> END, RectTransformation);
// 2. each rect, in order, erases every kept rect it overlaps (IoU > MIN_SIMILARITY) and
//    is kept: a tracked object wins over a detection it overlaps;
// 3. each kept rect -> a slot: the crop's frame_from_tensor (the rect grown to the model
//    input's aspect when KEEP_ASPECT: PadRoi), the rect, the letterbox padding.
// slot record (SLOT_VEC4 vec4): [0], [1] frame_from_tensor rows (what preprocess.wgsl
// reads: the first 32 bytes); [2] centre, size (px); [3] rotation, cos, sin, valid;
// [4] padding (left, top, right, bottom); [5] tracked (1) or detected (0), frame w, h, 0.
// status: (slots, detections used (1) or not, detections, tracked).

struct Params {
  row0: vec4<f32>,
  row1: vec4<f32>,
  frame: vec4<f32>,  // (frame width, height, 1 / width, 1 / height)
};

{{ bindings.detections }}
{{ bindings.det_status }}
{{ bindings.params }}
{{ bindings.tracked }}
{{ bindings.slots }}
{{ bindings.status }}
{{ bindings.gates }}  // u32: [0] the detector (hands_finish.wgsl), [1 + k] slot k

{% include "vision/track_rect.wgsl" %}

const MAX_OBJECTS: u32 = {{ max_objects }}u;
const SLOTS: u32 = {{ slots }}u;
const CANDIDATES: u32 = {{ candidates }}u;  // MAX_OBJECTS + SLOTS
const SLOT_VEC4: u32 = 6u;
const FRAME_PX: u32 = {{ frame_px }}u;  // word offset of a record's frame-pixel section
const STRIDE: u32 = {{ stride }}u;      // words per detection record
const START: u32 = {{ start }}u;        // the rotation keypoints
const END: u32 = {{ end }}u;
const TARGET: f32 = {{ target }};
const SCALE: vec2<f32> = vec2<f32>({{ scale_x }}, {{ scale_y }});
const SHIFT: vec2<f32> = vec2<f32>({{ shift_x }}, {{ shift_y }});
const SQUARE: u32 = {{ square }}u;
const MIN_SIMILARITY: f32 = {{ min_similarity }};
const KEEP_ASPECT: bool = {{ keep_aspect }};
const INPUT_ASPECT: f32 = {{ input_aspect }};  // the crop model's input height / width

fn keypoint(d: u32, j: u32) -> vec2<f32> {
  let at = d * STRIDE + FRAME_PX + 4u + 2u * j;
  return vec2<f32>(detections[at], detections[at + 1u]);
}

fn detected(d: u32) -> Rect {
  let at = d * STRIDE + FRAME_PX;
  let box = vec4<f32>(detections[at], detections[at + 1u], detections[at + 2u],
                      detections[at + 3u]);
  let r = detection_rect(box, keypoint(d, START), keypoint(d, END), TARGET);
  return transform_rect(r, SCALE, SHIFT, SQUARE);
}

// tracked: vec4 (count, 0, 0, 0), then per rect vec4 (centre, size), vec4 (rotation, ...)
fn tracked_rect(i: u32) -> Rect {
  let a = tracked[1u + 2u * i];
  return Rect(a.xy, a.zw, tracked[2u + 2u * i].x);
}

fn write_slot(k: u32, r: Rect, from_tracking: bool, frame: vec2<f32>) {
  let c = cos(r.rotation);
  let s = sin(r.rotation);
  var crop = r.size;  // PadRoi: grown to the input's aspect, and the letterbox it leaves
  var padding = vec4<f32>(0.0);
  if (KEEP_ASPECT) {
    let roi_aspect = r.size.y / r.size.x;
    if (INPUT_ASPECT > roi_aspect) {
      crop = vec2<f32>(r.size.x, r.size.x * INPUT_ASPECT);
      let v = (1.0 - roi_aspect / INPUT_ASPECT) / 2.0;
      padding = vec4<f32>(0.0, v, 0.0, v);
    } else {
      crop = vec2<f32>(r.size.y / INPUT_ASPECT, r.size.y);
      let h = (1.0 - INPUT_ASPECT / roi_aspect) / 2.0;
      padding = vec4<f32>(h, 0.0, h, 0.0);
    }
  }
  let w = crop.x;
  let h = crop.y;
  let at = k * SLOT_VEC4;
  slots[at] = vec4<f32>(w * c, -h * s, r.centre.x - 0.5 * w * c + 0.5 * h * s, 0.0);
  slots[at + 1u] = vec4<f32>(w * s, h * c, r.centre.y - 0.5 * w * s - 0.5 * h * c, 0.0);
  slots[at + 2u] = vec4<f32>(r.centre, r.size);
  slots[at + 3u] = vec4<f32>(r.rotation, c, s, 1.0);
  slots[at + 4u] = padding;
  slots[at + 5u] = vec4<f32>(select(0.0, 1.0, from_tracking), frame, 0.0);
}

@compute @workgroup_size(1)
fn main() {
  let frame = params.frame.xy;
  let n_tracked = min(u32(tracked[0].x), SLOTS);
  var n_detected = 0u;
  if (n_tracked < MAX_OBJECTS) {
    n_detected = min(det_status[0], MAX_OBJECTS);
  }
  // association: `kept` holds candidate indices in output order
  var rects: array<Rect, CANDIDATES>;
  var kept: array<u32, CANDIDATES>;
  var n_kept = 0u;
  let n = n_detected + n_tracked;
  for (var i = 0u; i < n; i++) {
    if (i < n_detected) {
      rects[i] = detected(i);
    } else {
      rects[i] = tracked_rect(i - n_detected);
    }
    var m = 0u;
    for (var j = 0u; j < n_kept; j++) {
      if (rect_iou(rects[i], rects[kept[j]]) <= MIN_SIMILARITY) {
        kept[m] = kept[j];
        m++;
      }
    }
    kept[m] = i;
    n_kept = m + 1u;
  }
  n_kept = min(n_kept, SLOTS);
  for (var k = 0u; k < SLOTS; k++) {
    if (k < n_kept) {
      write_slot(k, rects[kept[k]], kept[k] >= n_detected, frame);
    } else {
      slots[k * SLOT_VEC4 + 3u].w = 0.0;
    }
    gates[1u + k] = select(0u, 1u, k < n_kept);  // an empty slot's model does not run
  }
  status[0] = n_kept;
  status[1] = select(0u, 1u, n_tracked < MAX_OBJECTS);
  status[2] = n_detected;
  status[3] = n_tracked;
}
