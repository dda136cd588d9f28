// The camera frame over the whole render target: one full-screen triangle.

{{ bindings.frame }}
{{ bindings.frame_sampler }}

{% include "app/fullscreen.wgsl" %}

@fragment
fn fs(in: VsOut) -> @location(0) vec4<f32> {
  return vec4<f32>(textureSampleLevel(frame, frame_sampler, in.uv, 0.0).rgb, 1.0);
}
