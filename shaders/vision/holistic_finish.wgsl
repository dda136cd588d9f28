// The end of a Holistic frame on the GPU (one thread a landmark; engine/vision/
// gpu_holistic.py), after the hands' and the face's decoding:
// - `previous`: what the next frame's tracking checks read (holistic_recrop.wgsl,
//   holistic_face_roi.wgsl): per hand (kept, 0, 0, 0) then its N_HAND landmarks
//   normalised, then the face's head and N_FACE landmarks; a part not kept this frame is
//   not tracked into the next, as solutions/holistic.py's _previous;
// - what an app draws: the kept hands' landmarks in frame pixels, left first, packed
//   (`points` from 0, w = 1), their labels (vec4 (1, side: 0 left / 1 right, flag, 0) per
//   drawn hand), DrawIndirect args of their segments (HAND_PAIRS each) and dots
//   (`hand_args`); the face's landmarks in frame pixels (`points` from FACE_POINTS) and
//   the args of its FACE_PAIRS segments and dots (`face_args`): no instances without it;
// - the tally, the small read of a frame: (body kept, left hand kept, right hand kept,
//   face kept, left ROI, right ROI, face ROI: 0 none, 1 re-crop, 2 tracked; 0).
// parts: the hand_decode.wgsl records (HAND_VEC4 per side) from 0, the face_decode.wgsl
// record from FACE_AT.

{{ bindings.parts }}
{{ bindings.gates }}
{{ bindings.pose_slot }}
{{ bindings.previous }}
{{ bindings.points }}
{{ bindings.labels }}
{{ bindings.hand_args }}
{{ bindings.face_args }}
{{ bindings.tally }}

const N_HAND: u32 = {{ n_hand }}u;
const N_FACE: u32 = {{ n_face }}u;
const HAND_VEC4: u32 = 1u + 2u * N_HAND;
const FACE_AT: u32 = {{ face_at }}u;
const FACE_POINTS: u32 = {{ face_points }}u;
const HAND_PAIRS: u32 = {{ hand_pairs }}u;
const FACE_PAIRS: u32 = {{ face_pairs }}u;
const PREVIOUS_FACE: u32 = 2u * (1u + N_HAND);

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  let i = gid.x;
  let frame = pose_slot[5].yz;
  let px = vec3<f32>(frame, frame.x);  // normalised -> pixels (z on x's scale)
  let left = parts[0].x > 0.5;
  let right = parts[HAND_VEC4].x > 0.5;
  let face = parts[FACE_AT].x > 0.5;
  if (i < 2u * N_HAND) {
    let k = i / N_HAND;
    let j = i % N_HAND;
    let q = parts[k * HAND_VEC4 + 1u + j];
    previous[k * (1u + N_HAND) + 1u + j] = vec4<f32>(q.xyz, 0.0);
    let kept = select(left, right, k == 1u);
    if (kept) {
      let drawn = select(0u, 1u, k == 1u && left);  // the right hand follows a drawn left
      points[drawn * N_HAND + j] = vec4<f32>(q.xyz * px, 1.0);
    }
  }
  if (i < N_FACE) {
    let q = parts[FACE_AT + 1u + i];
    previous[PREVIOUS_FACE + 1u + i] = vec4<f32>(q.xyz, 0.0);
    points[FACE_POINTS + i] = vec4<f32>(q.xyz * px, 1.0);
  }
  if (i != 0u) {
    return;
  }
  var drawn = 0u;
  for (var k = 0u; k < 2u; k++) {
    let head = parts[k * HAND_VEC4];
    previous[k * (1u + N_HAND)] = vec4<f32>(head.x, 0.0, 0.0, 0.0);
    if (head.x > 0.5) {
      labels[drawn] = vec4<f32>(1.0, f32(k), head.y, 0.0);
      drawn++;
    }
  }
  previous[PREVIOUS_FACE] = vec4<f32>(parts[FACE_AT].x, 0.0, 0.0, 0.0);
  hand_args[0] = 6u;  // segments: 6 vertices each, one instance per (hand, pair)
  hand_args[1] = drawn * HAND_PAIRS;
  hand_args[2] = 0u;
  hand_args[3] = 0u;
  hand_args[4] = 6u;  // dots: one instance per (hand, landmark)
  hand_args[5] = drawn * N_HAND;
  hand_args[6] = 0u;
  hand_args[7] = 0u;
  let shown = select(0u, 1u, face);
  face_args[0] = 6u;
  face_args[1] = shown * FACE_PAIRS;
  face_args[2] = 0u;
  face_args[3] = 0u;
  face_args[4] = 6u;
  face_args[5] = shown * N_FACE;
  face_args[6] = 0u;
  face_args[7] = 0u;
  tally[0] = gates[0];  // the face detector's gate: a body
  tally[1] = select(0u, 1u, left);
  tally[2] = select(0u, 1u, right);
  tally[3] = shown;
  tally[4] = gates[3];
  tally[5] = gates[4];
  tally[6] = gates[5];
  tally[7] = 0u;
}
