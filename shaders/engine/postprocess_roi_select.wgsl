// The face-mesh graph's choice of ROI: the one from the previous frame's landmarks while
// it is valid (a face was present), else the one from this frame's detection.

@group(0) @binding(0) var<storage, read> detected: array<vec4<f32>, 6>;
@group(0) @binding(1) var<storage, read> tracked: array<vec4<f32>, 6>;
@group(0) @binding(2) var<storage, read_write> roi: array<vec4<f32>, 6>;

@compute @workgroup_size(1)
fn main() {
  let use_tracked = tracked[5].y > 0.5;
  for (var i = 0u; i < 6u; i++) {
    roi[i] = select(detected[i], tracked[i], use_tracked);
  }
}
