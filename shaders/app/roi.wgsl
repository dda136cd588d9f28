// Face mesh region of interest: the rotated crop the landmark model saw, as a thin outline,
// from the ROI buffer the post-process wrote (frame_from_tensor rows); hidden while the
// landmark model's face flag is off.
// The ROI is read as a storage buffer, not a uniform: on lavapipe (Mesa 22.3.6) a vertex
// shader reading a uniform buffer whose contents change every frame grew RSS by ~190 KB
// per draw (376 -> 863 MB over 3,000 frames); as read-only storage it stays flat
// (docs/benchmarks.md, "Soak").
{% include "app/draw.wgsl" %}

struct Roi {
  m0: vec4<f32>,  // frame_from_tensor rows: frame px = M (u, v, 1)
  m1: vec4<f32>,
  inv0: vec4<f32>,
  inv1: vec4<f32>,
  rect: vec4<f32>,
  info: vec4<f32>,  // rotation, valid, frame width, frame height
};

{{ bindings.roi }}
{{ bindings.status }}  // (presence, present, valid, 0)

const THICK: f32 = 1.5;

fn corner(i: u32) -> vec2<f32> {
  let uv = vec3<f32>(f32(i == 1u || i == 2u), f32(i >= 2u), 1.0);
  return vec2<f32>(dot(roi.m0.xyz, uv), dot(roi.m1.xyz, uv));
}

@vertex
fn vs(@builtin(vertex_index) v: u32) -> @builtin(position) vec4<f32> {
  let e = v / 6u;
  let p = segment_corner(corner(e), corner((e + 1u) % 4u), THICK, v % 6u);
  let shown = roi.info.y > 0.5 && status[1] > 0.5;
  return select(vec4<f32>(2.0, 2.0, 0.0, 1.0), to_clip(p, roi.info.zw), shown);
}

@fragment
fn fs() -> @location(0) vec4<f32> {
  return vec4<f32>(1.0, 0.85, 0.2, 0.8);
}
