// Landmarks -> the ROI of the next frame (MediaPipe's FaceLandmarkLandmarksToRoi:
// LandmarksToDetectionCalculator = the box around every landmark, with the landmarks as
// keypoints; then DetectionsToRects + RectTransformation, roi_rect.wgsl).
// Reads LandmarkProjector's points (frame pixels) and status, and the ROI they came from
// (for the frame size); writes the tracking ROI record, valid only when a face was present.

@group(0) @binding(0) var<storage, read> points: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read> lm_status: array<f32>;  // presence, present, ...
@group(0) @binding(2) var<storage, read> source_roi: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read_write> roi: array<vec4<f32>>;

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
