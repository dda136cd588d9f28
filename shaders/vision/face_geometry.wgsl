// Face geometry on the GPU (engine/vision/gpu_face_geometry.py): MediaPipe's
// FaceGeometryPipelineCalculator in float32, one work group per face. Its numpy twin,
// engine/vision/face_geometry.py (float64), is the oracle; the steps are its steps:
// 1. the 468 normalised landmarks onto the near plane (cm, y up, z on x's scale); a face
//    whose landmarks lie within TOO_COMPACT of their mean (normalised x, y) is dropped;
// 2. the weighted orthogonal Procrustes solve of the canonical basis onto the projected
//    basis landmarks (z negated) -> a first scale; the basis unprojected with it -> the
//    solve again -> a second scale;
// 3. every landmark unprojected with both scales (metric camera space); the pose is the
//    solve on its basis; the mesh is the metric face brought back by the inverse pose.
// The rotation of a solve is Horn's (1987): the unit quaternion that maximises the
// weighted sum of target . R source is the eigenvector of the 4x4 symmetric matrix made of
// the cross-covariance with the largest eigenvalue (cyclic Jacobi here). That is the
// maximiser over proper rotations of the objective procrustes_solver.cc maximises with
// its SVD and sign fix, so the same rotation, never a reflection. Written per face: the
// pose's 4 columns and (valid, first scale, second scale, their product) in `poses`;
// 468 vec4 (x, y, z, 1) in cm in `mesh`, only when valid.

{{ bindings.points }}
{{ bindings.status }}
{{ bindings.params }}
{{ bindings.poses }}
{{ bindings.mesh }}

struct Params {
  near_plane: vec4<f32>,  // (width, height, 0, 0) in cm at the frame's aspect ratio
  // where the input is (a uniform, not a constant: one pipeline for every caller):
  // vec4 index of face 0's landmark 0, vec4s from one face to the next; f32 index of face
  // 0's present flag, f32s from one face to the next
  input: vec4<u32>,
};

const NV: u32 = 468u;          // the canonical mesh's vertices
const NB: u32 = 33u;           // the Procrustes basis
const WG: u32 = 64u;
const NEAR: f32 = {{ near }};
const TOP_LEFT: bool = {{ top_left }};
const TOO_COMPACT: f32 = 1e-3;  // geometry_pipeline.cc IsScreenLandmarkListTooCompact
const EPS: f32 = 1e-9;          // procrustes_solver.cc kAbsoluteErrorEps
const TOTAL_WEIGHT: f32 = {{ total_weight }};
const SOURCE_NORM2: f32 = {{ source_norm2 }};  // sum of w |source - centre|^2
const CENTRE: vec3<f32> = vec3<f32>({{ centre }});  // the basis' weighted mean
const BASIS = array<u32, 33>({{ basis }});
const WEIGHT = array<f32, 33>({{ weights }});
const SOURCE = array<vec3<f32>, 33>({{ source }});  // centred on CENTRE, cm

var<workgroup> screen: array<vec4<f32>, NV>;
var<workgroup> part: array<vec4<f32>, WG>;
var<workgroup> pose: array<vec4<f32>, 5>;  // scale * R columns, translation, flags
var<private> dst: array<vec3<f32>, 33>;

struct Fit {
  r: mat3x3<f32>,
  s: f32,
  t: vec3<f32>,
  ok: bool,
};

// The eigenvector of the largest eigenvalue of symmetric `n` (cyclic Jacobi: each sweep
// zeroes the 6 off-diagonal pairs in turn; a 4x4 converges in 4-5 sweeps, 8 run).
fn top_eigenvector(n: mat4x4<f32>) -> vec4<f32> {
  var a: array<array<f32, 4>, 4>;
  var v: array<array<f32, 4>, 4>;
  for (var i = 0u; i < 4u; i++) {
    for (var j = 0u; j < 4u; j++) {
      a[i][j] = n[j][i];
      v[i][j] = select(0.0, 1.0, i == j);
    }
  }
  for (var sweep = 0u; sweep < 8u; sweep++) {
    for (var p = 0u; p < 3u; p++) {
      for (var q = p + 1u; q < 4u; q++) {
        let apq = a[p][q];
        // converged for this pair (also keeps theta finite)
        if (abs(apq) <= 1e-12 * (abs(a[p][p]) + abs(a[q][q]))) {
          continue;
        }
        let theta = (a[q][q] - a[p][p]) / (2.0 * apq);
        var t = 1.0 / (abs(theta) + sqrt(theta * theta + 1.0));
        if (theta < 0.0) {
          t = -t;
        }
        let c = inverseSqrt(t * t + 1.0);
        let s = t * c;
        for (var k = 0u; k < 4u; k++) {  // a <- a J (columns p, q)
          let akp = a[k][p];
          let akq = a[k][q];
          a[k][p] = c * akp - s * akq;
          a[k][q] = s * akp + c * akq;
        }
        for (var k = 0u; k < 4u; k++) {  // a <- J^T a (rows p, q)
          let apk = a[p][k];
          let aqk = a[q][k];
          a[p][k] = c * apk - s * aqk;
          a[q][k] = s * apk + c * aqk;
        }
        for (var k = 0u; k < 4u; k++) {  // v <- v J
          let vkp = v[k][p];
          let vkq = v[k][q];
          v[k][p] = c * vkp - s * vkq;
          v[k][q] = s * vkp + c * vkq;
        }
      }
    }
  }
  var best = 0u;
  for (var i = 1u; i < 4u; i++) {
    if (a[i][i] > a[best][best]) {
      best = i;
    }
  }
  return vec4<f32>(v[0][best], v[1][best], v[2][best], v[3][best]);
}

// procrustes_solver.cc SolveWeightedOrthogonalProblem of SOURCE onto `dst`: the rotation
// by Horn's method (header), scale = sum w (R src) . dst / SOURCE_NORM2, translation =
// mean(dst) - s R CENTRE; both point sets centred first (float32).
fn solve() -> Fit {
  var mean = vec3<f32>(0.0);
  for (var i = 0u; i < NB; i++) {
    mean += WEIGHT[i] * dst[i];
  }
  mean /= TOTAL_WEIGHT;
  var cov = mat3x3<f32>(vec3<f32>(0.0), vec3<f32>(0.0), vec3<f32>(0.0));  // cov[a][b]: s_ab
  for (var i = 0u; i < NB; i++) {
    let d = WEIGHT[i] * (dst[i] - mean);
    cov += mat3x3<f32>(SOURCE[i].x * d, SOURCE[i].y * d, SOURCE[i].z * d);
  }
  // s_ab = sum w source_a target_b (Horn's S)
  let sxx = cov[0].x; let sxy = cov[0].y; let sxz = cov[0].z;
  let syx = cov[1].x; let syy = cov[1].y; let syz = cov[1].z;
  let szx = cov[2].x; let szy = cov[2].y; let szz = cov[2].z;
  let norm = sqrt(dot(cov[0], cov[0]) + dot(cov[1], cov[1]) + dot(cov[2], cov[2]));
  let n = mat4x4<f32>(
    vec4<f32>(sxx + syy + szz, syz - szy, szx - sxz, sxy - syx),
    vec4<f32>(syz - szy, sxx - syy - szz, sxy + syx, szx + sxz),
    vec4<f32>(szx - sxz, sxy + syx, -sxx + syy - szz, syz + szy),
    vec4<f32>(sxy - syx, szx + sxz, syz + szy, -sxx - syy + szz));
  let q = top_eigenvector(n);
  let w = q.x; let x = q.y; let y = q.z; let z = q.w;
  let r = mat3x3<f32>(  // columns
    vec3<f32>(w * w + x * x - y * y - z * z, 2.0 * (x * y + w * z), 2.0 * (x * z - w * y)),
    vec3<f32>(2.0 * (x * y - w * z), w * w - x * x + y * y - z * z, 2.0 * (y * z + w * x)),
    vec3<f32>(2.0 * (x * z + w * y), 2.0 * (y * z - w * x), w * w - x * x - y * y + z * z));
  var numerator = 0.0;
  for (var i = 0u; i < NB; i++) {
    numerator += WEIGHT[i] * dot(r * SOURCE[i], dst[i] - mean);
  }
  let s = numerator / SOURCE_NORM2;
  return Fit(r, s, mean - s * (r * CENTRE), norm > EPS && s > EPS);
}

// MoveAndRescaleZ, UnprojectXY, ChangeHandedness: a near-plane point into metric camera
// space at `scale` (`depth_offset`: the landmarks' mean z on the near plane)
fn metric(p: vec3<f32>, depth_offset: f32, scale: f32) -> vec3<f32> {
  let z = (p.z - depth_offset + NEAR) / scale;
  return vec3<f32>(p.x * z / NEAR, p.y * z / NEAR, -z);
}

fn landmark(face: u32, i: u32) -> vec3<f32> {
  return points[params.input.x + face * params.input.y + i].xyz;
}

// A tree sum (or max, in .w) of `part` over the work group; every invocation calls it.
fn reduce(li: u32, take_max: bool) -> vec4<f32> {
  for (var step = WG / 2u; step > 0u; step /= 2u) {
    workgroupBarrier();
    if (li < step) {
      let a = part[li];
      let b = part[li + step];
      part[li] = select(a + b, max(a, b), take_max);
    }
  }
  workgroupBarrier();
  let out = part[0];
  workgroupBarrier();
  return out;
}

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
  let face = wid.x;
  let li = lid.x;
  let nw = params.near_plane.x;
  let nh = params.near_plane.y;
  // 1. ProjectXY onto the near plane; sums for the means (x, y normalised; z projected)
  var sums = vec4<f32>(0.0);
  for (var i = li; i < NV; i += WG) {
    let p = landmark(face, i);
    let y = select(p.y, 1.0 - p.y, TOP_LEFT);
    let q = vec3<f32>(p.x * nw - 0.5 * nw, y * nh - 0.5 * nh, p.z * nw);
    screen[i] = vec4<f32>(q, 0.0);
    sums += vec4<f32>(p.xy, q.z, 0.0);
  }
  part[li] = sums;
  let mean = reduce(li, false) / f32(NV);
  var far = vec4<f32>(0.0);
  for (var i = li; i < NV; i += WG) {
    let d = landmark(face, i).xy - mean.xy;
    far = max(far, vec4<f32>(dot(d, d)));
  }
  part[li] = far;
  let spread = sqrt(reduce(li, true).x);
  let depth_offset = mean.z;
  // 2. and 3.: the solves, on one invocation (33 points each)
  if (li == 0u) {
    let present = status[params.input.z + face * params.input.w] > 0.5;
    // one call site, three passes: the solve's code is compiled once
    var scales = vec2<f32>(1.0);
    var ok = present && spread > TOO_COMPACT;
    var fit: Fit;
    for (var round = 0u; round < 3u; round++) {
      let scale = select(scales.x * scales.y, scales.x, round == 1u);
      for (var i = 0u; i < NB; i++) {
        let p = screen[BASIS[i]].xyz;
        dst[i] = select(metric(p, depth_offset, scale), p * vec3<f32>(1.0, 1.0, -1.0),
                        round == 0u);
      }
      fit = solve();
      ok = ok && fit.ok;
      if (round == 0u) {
        scales.x = fit.s;
      } else if (round == 1u) {
        scales.y = fit.s;
      }
    }
    let first = scales.x;
    let second = scales.y;
    let scale = first * second;
    pose[0] = vec4<f32>(fit.s * fit.r[0], 0.0);
    pose[1] = vec4<f32>(fit.s * fit.r[1], 0.0);
    pose[2] = vec4<f32>(fit.s * fit.r[2], 0.0);
    pose[3] = vec4<f32>(fit.t, 1.0);
    pose[4] = vec4<f32>(select(0.0, 1.0, ok), first, second, scale);
    for (var k = 0u; k < 5u; k++) {
      poses[face * 5u + k] = pose[k];
    }
  }
  workgroupBarrier();
  let flags = pose[4];
  if (flags.x < 0.5) {
    return;
  }
  // the mesh: the metric landmarks brought back by the inverse pose, (1 / s) R^T (p - t)
  let s = length(pose[0].xyz);
  let rt = transpose(mat3x3<f32>(pose[0].xyz / s, pose[1].xyz / s, pose[2].xyz / s));
  let t = pose[3].xyz;
  for (var i = li; i < NV; i += WG) {
    let p = metric(screen[i].xyz, depth_offset, flags.w);
    mesh[face * NV + i] = vec4<f32>(rt * (p - t) / s, 1.0);
  }
}
