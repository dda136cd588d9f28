// Detection -> rotated ROI -> the 2x3 affine frame_from_tensor of the next model's crop, in
// frame pixels (the record layout and the maths: roi_rect.wgsl).
// Reads detection 0 (the best) of an SsdDecoder; with no detection the matrices keep their
// previous value and `valid` is 0.

struct Params {
  row0: vec4<f32>,
  row1: vec4<f32>,
  frame: vec4<f32>,  // (frame width, height, 1 / width, 1 / height)
};

{{ bindings.detections }}
{{ bindings.det_status }}
{{ bindings.params }}
{{ bindings.roi }}

{% include "roi_rect.wgsl" %}

const FRAME_PX: u32 = {{ frame_px }}u;  // word offset of the frame-pixel section of a record
const START: u32 = {{ start }}u;        // rotation vector keypoints
const END: u32 = {{ end }}u;

fn keypoint(j: u32) -> vec2<f32> {
  return vec2<f32>(detections[FRAME_PX + 4u + 2u * j], detections[FRAME_PX + 5u + 2u * j]);
}

@compute @workgroup_size(1)
fn main() {
  let frame = params.frame.xy;
  if (det_status[0] == 0u) {
    roi[5] = vec4<f32>(roi[5].x, 0.0, frame);
    return;
  }
  let box = vec4<f32>(detections[FRAME_PX], detections[FRAME_PX + 1u],
                      detections[FRAME_PX + 2u], detections[FRAME_PX + 3u]);
  write_rect_roi(box, keypoint(START), keypoint(END), frame, 0.0);
}
