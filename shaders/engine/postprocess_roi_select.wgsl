// The face-mesh graph's choice of ROI: the one from the previous frame's landmarks while
// it is valid (a face was present), else the one from this frame's detection.

{{ bindings.detected }}
{{ bindings.tracked }}
{{ bindings.roi }}

@compute @workgroup_size(1)
fn main() {
  let use_tracked = tracked[5].y > 0.5;
  for (var i = 0u; i < 6u; i++) {
    roi[i] = select(detected[i], tracked[i], use_tracked);
  }
}
