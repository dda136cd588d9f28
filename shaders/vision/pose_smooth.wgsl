// The body's filters (one thread a landmark; engine/vision/gpu_pose.py; smoothing.py is
// its numpy twin, float32 state as MediaPipe's C++), each as pose_clock.wgsl's steps say:
// - landmarks 0 .. BODY - 1: the landmark filter (one-euro on pixels: x * W, y * H, z * W),
//   the visibility low-pass, the world filter (one-euro on metres);
// - the auxiliary points BODY, BODY + 1: their filter (one-euro on pixels), for the next ROI.
// filters (vec4): per one-euro filter of a landmark, 3 vec4 (the x filter's raw value, its
// stored value, the derivative filter's stored value; x, y, z in lanes 0-2): the
// landmarks' at 0, the world landmarks' at 3 BODY, the auxiliary points' at 6 BODY; then
// the visibility filters' stored values (lane 0) at VISIBILITY.
// pose record (vec4, what process() reads): [0] the body's head (kept, flag, tracked,
// detections used); [1 .. BODY] landmarks normalised (x, y, z, visibility), smoothed;
// [1 + BODY .. 2 BODY] world landmarks (x, y, z, presence), smoothed; [1 + 2 BODY],
// [2 + 2 BODY] the auxiliary points normalised, filtered.

{{ bindings.body }}
{{ bindings.slot }}
{{ bindings.steps }}
{{ bindings.filters }}
{{ bindings.pose }}

const N: u32 = {{ n }}u;        // landmarks in the body record
const BODY: u32 = {{ body }}u;
const VISIBILITY: u32 = 3u * (2u * BODY + 2u);
const PI: f32 = 3.14159265358979;
const VISIBILITY_ALPHA: f32 = {{ visibility_alpha }};
// (min cutoff, beta, derivative cutoff) of the landmark, world and auxiliary filters
const LANDMARK_FILTER: vec3<f32> = vec3<f32>({{ landmark_filter }});
const WORLD_FILTER: vec3<f32> = vec3<f32>({{ world_filter }});
const AUX_FILTER: vec3<f32> = vec3<f32>({{ aux_filter }});

// OneEuroFilter's (and LowPassFilter's) smoothing factor at `cutoff`
fn alpha(cutoff: vec3<f32>, frequency: f32) -> vec3<f32> {
  let te = 1.0 / frequency;
  let tau = 1.0 / (2.0 * PI * cutoff);
  return 1.0 / (1.0 + tau / te);
}

// OneEuroFilter::Apply of the 3 filters (x, y, z) at filters[k .. k + 2], as `st` (a
// pose_clock.wgsl step) says
fn one_euro(k: u32, st: vec4<f32>, value: vec3<f32>, options: vec3<f32>) -> vec3<f32> {
  let mode = u32(st.x);
  if (mode == 0u) {
    return value;
  }
  if (mode == 1u) {  // both low-pass filters start: the value, a derivative of 0
    filters[k] = vec4<f32>(value, 0.0);
    filters[k + 1u] = vec4<f32>(value, 0.0);
    filters[k + 2u] = vec4<f32>(0.0);
    return value;
  }
  let frequency = st.y;
  let dvalue = (value - filters[k].xyz) * st.z * frequency;
  let ad = alpha(vec3<f32>(options.z), frequency);
  let edvalue = ad * dvalue + (1.0 - ad) * filters[k + 2u].xyz;
  let a = alpha(options.x + options.y * abs(edvalue), frequency);
  let out = a * value + (1.0 - a) * filters[k + 1u].xyz;
  filters[k] = vec4<f32>(value, 0.0);
  filters[k + 1u] = vec4<f32>(out, 0.0);
  filters[k + 2u] = vec4<f32>(edvalue, 0.0);
  return out;
}

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  let i = gid.x;
  let px = vec3<f32>(slot[5].y, slot[5].z, slot[5].y);  // normalised -> pixels
  if (i == 0u) {
    pose[0] = body[0];
  }
  if (i < BODY) {
    let lm = body[1u + i];
    let xyz = one_euro(3u * i, steps[0], lm.xyz * px, LANDMARK_FILTER) / px;
    var visibility = lm.w;
    let v = u32(steps[3].x);
    if (v == 1u) {
      filters[VISIBILITY + i].x = visibility;
    } else if (v == 2u) {
      visibility = VISIBILITY_ALPHA * visibility
                   + (1.0 - VISIBILITY_ALPHA) * filters[VISIBILITY + i].x;
      filters[VISIBILITY + i].x = visibility;
    }
    pose[1u + i] = vec4<f32>(xyz, visibility);
    let w = body[1u + N + i];
    pose[1u + BODY + i] = vec4<f32>(one_euro(3u * (BODY + i), steps[1], w.xyz, WORLD_FILTER),
                                    w.w);
  } else if (i < BODY + 2u) {
    let a = body[1u + i];
    let xyz = one_euro(3u * (BODY + i), steps[2], a.xyz * px, AUX_FILTER) / px;
    pose[1u + BODY + i] = vec4<f32>(xyz, 0.0);
  }
}
