// Landmarks -> the ROI of the next frame (MediaPipe's FaceLandmarkLandmarksToRoi:
// LandmarksToDetectionCalculator = the box around every landmark, with the landmarks as
// keypoints; then DetectionsToRects + RectTransformation, roi_rect.wgsl).
// Reads LandmarkProjector's points (frame pixels) and status, and the ROI they came from
// (for the frame size); writes the tracking ROI record, valid only when a face was present.

{{ bindings.points }}
{{ bindings.lm_status }}  // presence, present, ...
{{ bindings.source_roi }}
{{ bindings.roi }}

{% include "roi_rect.wgsl" %}

const N: u32 = {{ n }}u;
const START: u32 = {{ start }}u;  // rotation vector landmarks
const END: u32 = {{ end }}u;

@compute @workgroup_size(1)
fn main() {
  let frame = source_roi[5].zw;
  if (lm_status[1] < 0.5) {
    roi[5] = vec4<f32>(roi[5].x, 0.0, frame);
    return;
  }
  var lo = points[0].xy;
  var hi = lo;
  for (var i = 1u; i < N; i++) {
    lo = min(lo, points[i].xy);
    hi = max(hi, points[i].xy);
  }
  write_rect_roi(vec4<f32>(lo, hi), points[START].xy, points[END].xy, frame, 1.0);
}
