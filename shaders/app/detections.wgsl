// Face detection overlay: per detection (instance), a box outline (4 segment quads) and K
// round keypoints, straight from the SSD post-process records. The instance count comes
// from the post-process's DrawIndirect args, so no count is read back.
{% include "app/draw.wgsl" %}

struct Params { frame: vec2<f32>, style: u32, _pad: u32 };

{{ bindings.detections }}
{{ bindings.params }}

const K: u32 = {{ num_keypoints }}u;
const STRIDE: u32 = {{ stride }}u;    // f32 words per record
const FRAME_PX: u32 = {{ frame_px }}u;  // word offset of the frame-pixel section
const THICK: f32 = 3.0;
const RADIUS: f32 = 4.5;

struct VsOut {
  @builtin(position) pos: vec4<f32>,
  @location(0) color: vec4<f32>,
  @location(1) local: vec2<f32>,  // keypoints: position in the quad, [-1, 1]^2
  @location(2) @interpolate(flat) round: u32,
};

fn word(d: u32, i: u32) -> f32 { return detections[d * STRIDE + FRAME_PX + i]; }

fn keypoint_color(k: u32) -> vec3<f32> {
  switch k {
    case 0u, 1u: { return vec3<f32>(0.2, 0.6, 1.0); }  // eyes
    case 2u: { return vec3<f32>(1.0, 0.9, 0.2); }  // nose tip
    case 3u: { return vec3<f32>(1.0, 0.3, 0.4); }  // mouth
    default: { return vec3<f32>(0.8, 0.4, 1.0); }  // ear tragions
  }
}

@vertex
fn vs(@builtin(vertex_index) v: u32, @builtin(instance_index) d: u32) -> VsOut {
  var out: VsOut;
  let q = v / 6u;
  let c = v % 6u;
  out.local = vec2<f32>(0.0);
  out.round = 0u;
  let show_box = params.style != 1u;
  let show_kp = params.style != 2u;
  if (q < 4u) {
    let lo = vec2<f32>(word(d, 0u), word(d, 1u));
    let hi = vec2<f32>(word(d, 2u), word(d, 3u));
    var p0 = lo;
    var p1 = vec2<f32>(hi.x, lo.y);
    if (q == 1u) { p0 = vec2<f32>(hi.x, lo.y); p1 = hi; }
    if (q == 2u) { p0 = hi; p1 = vec2<f32>(lo.x, hi.y); }
    if (q == 3u) { p0 = vec2<f32>(lo.x, hi.y); p1 = lo; }
    out.pos = to_clip(segment_corner(p0, p1, THICK, c), params.frame);
    out.color = vec4<f32>(0.2, 1.0, 0.35, select(0.0, 1.0, show_box));
  } else {
    let k = q - 4u;
    let centre = vec2<f32>(word(d, 4u + 2u * k), word(d, 5u + 2u * k));
    let local = quad_corner(c) * 2.0 - 1.0;
    out.pos = to_clip(centre + local * RADIUS, params.frame);
    out.local = local;
    out.round = 1u;
    out.color = vec4<f32>(keypoint_color(k), select(0.0, 1.0, show_kp));
  }
  return out;
}

@fragment
fn fs(in: VsOut) -> @location(0) vec4<f32> {
  if (in.color.a <= 0.0 || (in.round == 1u && dot(in.local, in.local) > 1.0)) {
    discard;
  }
  return in.color;
}
