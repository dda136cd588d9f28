// Landmark skeletons (hands, pose): segments between connected landmarks, then a round dot
// per landmark, all instanced from storage buffers the effect fills once per frame.
// points: `count` vec4 per skeleton (x, y frame pixels, z unused, w = 1 shown / 0 hidden);
// pairs: the connection set (landmark index pairs); colors: one vec4 per skeleton, or
// (with `labels`) two colours picked per skeleton by a label a GPU stage wrote (a hand's
// handedness: word 1 of its vec4, 0 or 1); gate (optional): a flag word that shows or
// hides everything (a face flag on the GPU).
// Instances: {{ "one per (skeleton, pair)" if part == "lines" else "one per (skeleton, point)" }}.
{% include "app/draw.wgsl" %}

struct Params { frame: vec2<f32>, count: u32, pairs: u32 };

{{ bindings.params }}
{{ bindings.points }}
{{ bindings.pairs }}
{{ bindings.colors }}
{% if gate is not none %}
// the whole overlay is shown while word {{ gate }} of this buffer is > 0.5 (a face flag)
{{ bindings.gate }}
{% endif %}
{% if labels %}
// per skeleton: colors[label], label = word 1 of its vec4 (0 or 1)
{{ bindings.labels }}
{% endif %}

const THICKNESS: f32 = {{ thickness }};  // frame pixels
const RADIUS: f32 = {{ radius }};

struct VsOut {
  @builtin(position) pos: vec4<f32>,
  @location(0) color: vec4<f32>,
  @location(1) local: vec2<f32>,
};

fn color_of(skeleton: u32) -> vec4<f32> {
{% if labels %}
  return colors[min(u32(labels[skeleton].y), 1u)];
{% else %}
  return colors[skeleton];
{% endif %}
}

fn gated(alpha: f32) -> f32 {
{% if gate is not none %}
  return select(0.0, alpha, gate[{{ gate }}u] > 0.5);
{% else %}
  return alpha;
{% endif %}
}

@vertex
fn vs(@builtin(vertex_index) v: u32, @builtin(instance_index) i: u32) -> VsOut {
  var out: VsOut;
{% if part == "lines" %}
  let skeleton = i / params.pairs;
  let pair = pairs[i % params.pairs];
  let a = points[skeleton * params.count + pair.x];
  let b = points[skeleton * params.count + pair.y];
  let shown = a.w * b.w;
  out.pos = to_clip(segment_corner(a.xy, b.xy, THICKNESS, v % 6u), params.frame);
  out.local = vec2<f32>(0.0);
  let color = color_of(skeleton);
  out.color = vec4<f32>(color.rgb, gated(color.a * shown));
{% else %}
  let skeleton = i / params.count;
  let p = points[i];
  let local = quad_corner(v % 6u) * 2.0 - 1.0;
  out.pos = to_clip(p.xy + local * RADIUS, params.frame);
  out.local = local;
  out.color = vec4<f32>(mix(color_of(skeleton).rgb, vec3<f32>(1.0), 0.55), gated(p.w));
{% endif %}
  return out;
}

@fragment
fn fs(in: VsOut) -> @location(0) vec4<f32> {
  if (in.color.a <= 0.0 || dot(in.local, in.local) > 1.0) { discard; }
  return in.color;
}
