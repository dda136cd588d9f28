// Face mesh overlay: one small round point per landmark (instance), from the landmark
// projector's vertex buffer (frame pixels); the instance count is the projector's
// DrawIndirect args: 0 when the face flag says no face, so the mesh hides itself.
{% include "app/draw.wgsl" %}

struct Params { frame: vec2<f32>, style: u32, _pad: u32 };

{{ bindings.params }}

const RADIUS: f32 = 1.8;  // frame pixels

struct VsOut {
  @builtin(position) pos: vec4<f32>,
  @location(0) color: vec4<f32>,
  @location(1) local: vec2<f32>,
};

@vertex
fn vs(@builtin(vertex_index) v: u32, @location(0) point: vec4<f32>) -> VsOut {
  let local = quad_corner(v % 6u) * 2.0 - 1.0;
  var out: VsOut;
  out.pos = to_clip(point.xy + local * RADIUS, params.frame);
  out.local = local;
  // depth cue: z (frame pixels, negative towards the camera) from cyan (near) to violet (far)
  let t = clamp(point.z / (0.12 * params.frame.x) + 0.5, 0.0, 1.0);
  out.color = vec4<f32>(mix(vec3<f32>(0.3, 1.0, 0.9), vec3<f32>(0.7, 0.3, 1.0), t), 1.0);
  return out;
}

@fragment
fn fs(in: VsOut) -> @location(0) vec4<f32> {
  let r2 = dot(in.local, in.local);
  if (r2 > 1.0) { discard; }
  return vec4<f32>(in.color.rgb, in.color.a * (1.0 - 0.4 * r2));
}
