// Blurred background for the segmentation effect, at a quarter of the frame's resolution:
// each texel averages a disc of the frame (golden-angle spiral of taps); the composite then
// samples this small texture with a linear filter. 16x fewer texels than blurring in the
// fragment shader (which cost ~20 ms a frame on lavapipe for 640x480).

{{ bindings.frame }}
{{ bindings.frame_sampler }}
{{ bindings.blurred }}

const TAPS: i32 = 24;
const RADIUS: f32 = {{ radius }};  // in frame pixels

@compute @workgroup_size(8, 8, 1)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  let size = textureDimensions(blurred);
  if (gid.x >= size.x || gid.y >= size.y) { return; }
  let uv = (vec2<f32>(gid.xy) + 0.5) / vec2<f32>(size);
  let px = RADIUS / vec2<f32>(textureDimensions(frame));
  var sum = textureSampleLevel(frame, frame_sampler, uv, 0.0).rgb;
  for (var k = 1; k <= TAPS; k++) {
    let r = sqrt(f32(k) / f32(TAPS));
    let a = f32(k) * 2.39996323;
    sum += textureSampleLevel(frame, frame_sampler, uv + vec2<f32>(cos(a), sin(a)) * r * px, 0.0).rgb;
  }
  textureStore(blurred, vec2<i32>(gid.xy), vec4<f32>(sum / f32(TAPS + 1), 1.0));
}
