{% include "common.wgsl" %}
// Pre-process: an RGBA frame texture through an ROI affine (crop / letterbox / rotate) into
// the model's normalised PHWC4 input, as MediaPipe's ImageToTensorCalculator on the CPU
// (the convention: engine/vision/image_to_tensor.py).
// roi: frame pixel = m * (i / W, j / H, 1) for tensor element (column i, row j), in pixel
// index coordinates (pixel k's centre is k): the ROI's corners are the tensor's corners.
// Bilinear over 4 textureLoad taps; outside the frame a tap is 0 (ZERO_BORDER) or the
// nearest edge pixel. QUANTIZE (8-bit frames): OpenCV 3.4's cv::warpPerspective in integers
// (the coordinate rounded to 1/32 px, 15-bit weights), as MediaPipe's CPU path; otherwise a
// float bilinear (float textures).

struct Roi { row0: vec4<f32>, row1: vec4<f32> };  // (m00, m01, m02, _), (m10, m11, m12, _)

{{ bindings.frame }}
{{ bindings.roi }}
{{ bindings.dst }}

const OUT_W: u32 = {{ w }}u;
const OUT_H: u32 = {{ h }}u;
const ZERO_BORDER: bool = {{ zero_border }};
const QUANTIZE: bool = {{ quantize }};

fn tap(p: vec2<i32>, size: vec2<i32>) -> vec3<f32> {
  if (ZERO_BORDER && (any(p < vec2<i32>(0)) || any(p >= size))) {
    return vec3<f32>(0.0);
  }
  return textureLoad(frame, clamp(p, vec2<i32>(0), size - vec2<i32>(1)), 0).rgb;
}

// OpenCV 3.4's 8-bit bilinear in integers: weights (32 - fy)(32 - fx) * 32 ... sum to 2^15,
// the sum rounded half up (engine/vision/image_to_tensor.py: the numpy twin).
fn bilinear_8bit(p: vec2<f32>, size: vec2<i32>) -> vec3<f32> {
  let q = vec2<i32>(round(p * 32.0));
  let i = q >> vec2<u32>(5u);
  let f = q & vec2<i32>(31);
  let g = vec2<i32>(32) - f;
  let s = vec3<i32>(round(tap(i, size) * 255.0)) * (g.y * g.x * 32)
        + vec3<i32>(round(tap(i + vec2<i32>(1, 0), size) * 255.0)) * (g.y * f.x * 32)
        + vec3<i32>(round(tap(i + vec2<i32>(0, 1), size) * 255.0)) * (f.y * g.x * 32)
        + vec3<i32>(round(tap(i + vec2<i32>(1, 1), size) * 255.0)) * (f.y * f.x * 32);
  return vec3<f32>((s + vec3<i32>(16384)) >> vec3<u32>(15u)) / 255.0;
}

fn bilinear(p: vec2<f32>, size: vec2<i32>) -> vec3<f32> {
  let base = floor(p);
  let f = p - base;
  let i = vec2<i32>(base);
  let top = mix(tap(i, size), tap(i + vec2<i32>(1, 0), size), f.x);
  let bottom = mix(tap(i + vec2<i32>(0, 1), size), tap(i + vec2<i32>(1, 1), size), f.x);
  return mix(top, bottom, f.y);
}

@compute @workgroup_size(8, 8, 1)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  if (gid.x >= OUT_W || gid.y >= OUT_H) { return; }
  let uv = vec3<f32>(f32(gid.x) / f32(OUT_W), f32(gid.y) / f32(OUT_H), 1.0);
  let p = vec2<f32>(dot(roi.row0.xyz, uv), dot(roi.row1.xyz, uv));
  let size = vec2<i32>(textureDimensions(frame));
  var rgb: vec3<f32>;
  if (QUANTIZE) {
    rgb = bilinear_8bit(p, size);
  } else {
    rgb = bilinear(p, size);
  }
  // [0, 1] -> [lo, hi]; the fourth lane is PHWC4 padding (channel 3 of 3).
  let v = rgb * {{ scale }} + vec3<f32>({{ offset }});
  dst[gid.y * OUT_W + gid.x] = vec4<T>(vec4<f32>(v, 0.0));
}
