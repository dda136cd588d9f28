// Shared by the overlay shaders: quads for thick segments and round points, in frame pixels.

// Corner c (0..5, two triangles) of a unit quad: (0,0) (1,0) (0,1) (0,1) (1,0) (1,1).
fn quad_corner(c: u32) -> vec2<f32> {
  let x = select(0.0, 1.0, c == 1u || c == 4u || c == 5u);
  let y = select(0.0, 1.0, c == 2u || c == 3u || c == 5u);
  return vec2<f32>(x, y);
}

// Frame pixels -> clip space (y down in the frame, up in clip space).
fn to_clip(px: vec2<f32>, frame: vec2<f32>) -> vec4<f32> {
  return vec4<f32>(px.x / frame.x * 2.0 - 1.0, 1.0 - px.y / frame.y * 2.0, 0.0, 1.0);
}

// Corner c of a segment p0 -> p1 drawn `t` pixels thick (extended by t/2 to close corners).
fn segment_corner(p0: vec2<f32>, p1: vec2<f32>, t: f32, c: u32) -> vec2<f32> {
  let d = p1 - p0;
  let len = max(length(d), 1e-4);
  let dir = d / len;
  let n = vec2<f32>(-dir.y, dir.x);
  let q = quad_corner(c);
  let along = mix(-0.5 * t, len + 0.5 * t, q.x);
  let across = (q.y - 0.5) * t;
  return p0 + dir * along + n * across;
}
