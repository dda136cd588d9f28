{% include "common.wgsl" %}
// Segmentation composite: camera where the person is, a styled background elsewhere.
// The mask is the engine's output buffer itself (PHWC4, one slice: vec4 y * W + x, lane 0),
// resampled bilinearly at each fragment; a smoothstep makes a soft, tight edge.
// The style is baked in (one pipeline per style): llvmpipe runs both sides of a branch on a
// uniform value, so a runtime switch made every style pay for the blur loop.

struct Params { frame_size: vec2<f32>, _pad: vec2<f32> };

{{ bindings.frame }}
{{ bindings.frame_sampler }}
{{ bindings.mask }}
{{ bindings.params }}
{{ bindings.blurred }}  // app/blur.wgsl's output (style 0)

const MASK_W: i32 = {{ mask_w }};
const MASK_H: i32 = {{ mask_h }};
const STYLE: u32 = {{ style }}u;  // 0 blur, 1 replace, 2 tint, 3 mask

{% include "app/fullscreen.wgsl" %}

fn mask_at(x: i32, y: i32) -> f32 {
  let cx = clamp(x, 0, MASK_W - 1);
  let cy = clamp(y, 0, MASK_H - 1);
  return f32(mask[cy * MASK_W + cx].x);
}

// Bilinear, texel centres at (i + 0.5) / size, as a linear-filtered texture would do.
fn mask_bilinear(uv: vec2<f32>) -> f32 {
  let p = uv * vec2<f32>(f32(MASK_W), f32(MASK_H)) - 0.5;
  let f = floor(p);
  let t = p - f;
  let x = i32(f.x);
  let y = i32(f.y);
  let top = mix(mask_at(x, y), mask_at(x + 1, y), t.x);
  let bottom = mix(mask_at(x, y + 1), mask_at(x + 1, y + 1), t.x);
  return clamp(mix(top, bottom, t.y), 0.0, 1.0);
}

fn replaced(uv: vec2<f32>) -> vec3<f32> {
  // a studio backdrop: vertical gradient with a faint grid
  let g = mix(vec3<f32>(0.10, 0.16, 0.34), vec3<f32>(0.55, 0.30, 0.55), uv.y);
  let cell = fract(uv * params.frame_size / 40.0);
  let line = step(0.95, max(cell.x, cell.y));
  return g + line * 0.08;
}

@fragment
fn fs(in: VsOut) -> @location(0) vec4<f32> {
  _ = params.frame_size;  // every style keeps the same bind group layout
  _ = textureDimensions(blurred);
  let camera = textureSampleLevel(frame, frame_sampler, in.uv, 0.0).rgb;
  let m = mask_bilinear(in.uv);
  let person = smoothstep(0.3, 0.7, m);
{% if style == 0 %}
  let background = textureSampleLevel(blurred, frame_sampler, in.uv, 0.0).rgb;
{% elif style == 1 %}
  let background = replaced(in.uv);
{% elif style == 2 %}
  let grey = dot(camera, vec3<f32>(0.299, 0.587, 0.114));
  let background = vec3<f32>(grey) * vec3<f32>(0.45, 0.75, 1.0);
{% else %}
  // the mask itself: red over the person, camera dimmed elsewhere
  return vec4<f32>(mix(camera * 0.5, vec3<f32>(1.0, 0.1, 0.1), m * 0.6), 1.0);
{% endif %}
{% if style < 3 %}
  return vec4<f32>(mix(background, camera, person), 1.0);
{% endif %}
}
