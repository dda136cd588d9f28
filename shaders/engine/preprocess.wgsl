{% include "common.wgsl" %}
// Pre-process: sample an RGBA frame texture through an ROI affine transform
// (crop / letterbox / rotate) and write the model's normalised PHWC4 input.
// roi: frame pixel = m * (u, v, 1), (u, v) the tensor pixel centre in [0, 1]^2.
// Outside the frame: the border colour (black, as MediaPipe's letterbox).

struct Roi { row0: vec4<f32>, row1: vec4<f32> };  // (m00, m01, m02, _), (m10, m11, m12, _)

@group(0) @binding(0) var frame: texture_2d<f32>;
@group(0) @binding(1) var frame_sampler: sampler;
@group(0) @binding(2) var<uniform> roi: Roi;
@group(0) @binding(3) var<storage, read_write> dst: array<vec4<T>>;

const OUT_W: u32 = {{ w }}u;
const OUT_H: u32 = {{ h }}u;

@compute @workgroup_size(8, 8, 1)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  if (gid.x >= OUT_W || gid.y >= OUT_H) { return; }
  let uv = vec3<f32>((f32(gid.x) + 0.5) / f32(OUT_W), (f32(gid.y) + 0.5) / f32(OUT_H), 1.0);
  let px = vec2<f32>(dot(roi.row0.xyz, uv), dot(roi.row1.xyz, uv));
  let size = vec2<f32>(textureDimensions(frame));
  var rgb = vec3<f32>(0.0);  // border
  if (all(px >= vec2<f32>(0.0)) && all(px < size)) {
    rgb = textureSampleLevel(frame, frame_sampler, px / size, 0.0).rgb;
  }
  // normalise [0, 1] -> [lo, hi]; the fourth lane is PHWC4 padding (channel 3 of 3).
  let v = rgb * {{ scale }} + vec3<f32>({{ offset }});
  dst[gid.y * OUT_W + gid.x] = vec4<T>(vec4<f32>(v, 0.0));
}
