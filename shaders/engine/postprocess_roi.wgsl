// Detection -> rotated ROI (MediaPipe DetectionsToRectsCalculator + RectTransformationCalculator)
// -> the 2x3 affine frame_from_tensor of the next model's crop, in frame pixels.
// Reads detection 0 (the best) of an SsdDecoder; with no detection the matrices keep their
// previous value and `valid` is 0. Worked in frame pixels, where MediaPipe's normalised
// formulas (x * image width) become plain pixel arithmetic.
//
// roi[0], roi[1]: frame_from_tensor rows (m00, m01, m02, 0): frame px = M (u, v, 1), (u, v)
//                 normalised crop coords -- the layout engine.vision.preprocess reads;
// roi[2], roi[3]: tensor_from_frame rows (the inverse);
// roi[4]:         (centre x, centre y, width, height) in frame pixels;
// roi[5]:         (rotation in radians, valid 1 / 0, frame width, frame height).

struct Params {
  row0: vec4<f32>,
  row1: vec4<f32>,
  frame: vec4<f32>,  // (frame width, height, 1 / width, 1 / height)
};

@group(0) @binding(0) var<storage, read> detections: array<f32>;
@group(0) @binding(1) var<storage, read> det_status: array<u32>;
@group(0) @binding(2) var<uniform> params: Params;
@group(0) @binding(3) var<storage, read_write> roi: array<vec4<f32>>;

const FRAME_PX: u32 = {{ frame_px }}u;  // word offset of the frame-pixel section of a record
const START: u32 = {{ start }}u;        // rotation vector keypoints
const END: u32 = {{ end }}u;
const TARGET: f32 = {{ target }};       // target angle (radians) and its cos / sin
const COS_T: f32 = {{ cos_t }};
const SIN_T: f32 = {{ sin_t }};
const SCALE: vec2<f32> = vec2<f32>({{ scale_x }}, {{ scale_y }});
const SHIFT: vec2<f32> = vec2<f32>({{ shift_x }}, {{ shift_y }});
const SQUARE: u32 = {{ square }}u;      // 0 keep, 1 long side, 2 short side
const PI: f32 = 3.14159265358979;

fn keypoint(j: u32) -> vec2<f32> {
  return vec2<f32>(detections[FRAME_PX + 4u + 2u * j], detections[FRAME_PX + 5u + 2u * j]);
}

@compute @workgroup_size(1)
fn main() {
  let frame = params.frame.xy;
  if (det_status[0] == 0u) {
    roi[5] = vec4<f32>(roi[5].x, 0.0, frame);
    return;
  }
  let box = vec4<f32>(detections[FRAME_PX], detections[FRAME_PX + 1u],
                      detections[FRAME_PX + 2u], detections[FRAME_PX + 3u]);
  var size = box.zw - box.xy;
  var centre = box.xy + size / 2.0;
  // rotation = TARGET - atan2(-(y1 - y0), x1 - x0), normalised to [-pi, pi); its cos and
  // sin come from the eye vector directly (no trigonometry: exact to f32 rounding).
  let v = keypoint(END) - keypoint(START);
  let r = length(v);
  var cp = 1.0;  // cos, sin of phi = atan2(-vy, vx)
  var sp = 0.0;
  if (r > 0.0) {
    cp = v.x / r;
    sp = -v.y / r;
  }
  let c = COS_T * cp + SIN_T * sp;  // cos(TARGET - phi)
  let s = SIN_T * cp - COS_T * sp;  // sin(TARGET - phi)
  var rotation = TARGET - atan2(-v.y, v.x);
  rotation = rotation - 2.0 * PI * floor((rotation + PI) / (2.0 * PI));
  // RectTransformationCalculator: shift along the rotated axes, square, scale
  centre += vec2<f32>(size.x * SHIFT.x * c - size.y * SHIFT.y * s,
                      size.x * SHIFT.x * s + size.y * SHIFT.y * c);
  if (SQUARE == 1u) {
    size = vec2<f32>(max(size.x, size.y));
  } else if (SQUARE == 2u) {
    size = vec2<f32>(min(size.x, size.y));
  }
  size *= SCALE;
  let w = size.x;
  let h = size.y;
  roi[0] = vec4<f32>(w * c, -h * s, centre.x - 0.5 * w * c + 0.5 * h * s, 0.0);
  roi[1] = vec4<f32>(w * s, h * c, centre.y - 0.5 * w * s - 0.5 * h * c, 0.0);
  roi[2] = vec4<f32>(c / w, s / w, 0.5 - (c * centre.x + s * centre.y) / w, 0.0);
  roi[3] = vec4<f32>(-s / h, c / h, 0.5 - (c * centre.y - s * centre.x) / h, 0.0);
  roi[4] = vec4<f32>(centre, w, h);
  roi[5] = vec4<f32>(rotation, 1.0, frame);
}
