// The end of a pose frame on the GPU (one invocation; engine/vision/gpu_pose.py):
// - what an app draws: the BODY landmarks in frame pixels (`points`, w = 1 where the
//   smoothed visibility >= VISIBLE: MediaPipe's drawing hides the others), DrawIndirect
//   args for the skeleton's segments (PAIRS) and dots, no instances without a body;
// - the next frame's ROI (`tracked`, read by pose_roi.wgsl) from the filtered auxiliary
//   points when TRACKING (pose_landmarks_to_roi: AlignmentPointsRects, RectTransformation),
//   none without a body;
// - the tally: (body kept, detections used, crop had a ROI, tracked), the small read of a
//   frame.

{{ bindings.slot }}
{{ bindings.pose }}
{{ bindings.tracked }}
{{ bindings.points }}
{{ bindings.args }}
{{ bindings.tally }}
{{ bindings.gate }}  // u32: whether the next frame's detector runs

{% include "vision/track_rect.wgsl" %}

const BODY: u32 = {{ body }}u;
const TRACKING: bool = {{ tracking }};
const PAIRS: u32 = {{ pairs }}u;
const VISIBLE: f32 = {{ visible }};
const TARGET: f32 = {{ target }};
const SCALE: vec2<f32> = vec2<f32>({{ scale_x }}, {{ scale_y }});
const SHIFT: vec2<f32> = vec2<f32>({{ shift_x }}, {{ shift_y }});
const SQUARE: u32 = {{ square }}u;

@compute @workgroup_size(1)
fn main() {
  let head = pose[0];  // kept, flag, tracked, detections used
  let kept = head.x > 0.5;
  let frame = slot[5].yz;
  if (kept) {
    for (var i = 0u; i < BODY; i++) {
      let q = pose[1u + i];
      points[i] = vec4<f32>(q.xy * frame, q.z * frame.x, select(0.0, 1.0, q.w >= VISIBLE));
    }
  }
  var n_tracked = 0.0;
  if (kept && TRACKING) {
    let a0 = pose[1u + 2u * BODY].xy * frame;
    let a1 = pose[2u + 2u * BODY].xy * frame;
    let r = transform_rect(alignment_rect(a0, a1, TARGET), SCALE, SHIFT, SQUARE);
    tracked[1] = vec4<f32>(r.centre, r.size);
    tracked[2] = vec4<f32>(r.rotation, 0.0, 0.0, 0.0);
    n_tracked = 1.0;
  }
  tracked[0] = vec4<f32>(n_tracked, 0.0, 0.0, 0.0);
  gate[0] = select(1u, 0u, n_tracked > 0.5);  // pose_roi.wgsl ignores detections then
  let shown = select(0u, 1u, kept);
  args[0] = 6u;  // segments: 6 vertices each, one instance per pair
  args[1] = shown * PAIRS;
  args[2] = 0u;
  args[3] = 0u;
  args[4] = 6u;  // dots: one instance per landmark
  args[5] = shown * BODY;
  args[6] = 0u;
  args[7] = 0u;
  tally[0] = shown;
  tally[1] = u32(head.w);
  tally[2] = u32(slot[3].w);
  tally[3] = u32(head.z);
}
