// Shared by the full-screen passes (frame blit, segmentation composite): one triangle that
// covers the render target, uv in [0,1]^2 over the screen (y down).

struct VsOut {
  @builtin(position) pos: vec4<f32>,
  @location(0) uv: vec2<f32>,
};

@vertex
fn vs(@builtin(vertex_index) i: u32) -> VsOut {
  // (0,0) (2,0) (0,2) in uv: covers the [0,1]^2 screen with one triangle
  let uv = vec2<f32>(f32((i << 1u) & 2u), f32(i & 2u));
  var out: VsOut;
  out.pos = vec4<f32>(uv.x * 2.0 - 1.0, 1.0 - uv.y * 2.0, 0.0, 1.0);
  out.uv = uv;
  return out;
}
