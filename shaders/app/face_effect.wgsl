// Face effects anchored in 3D (app/effects/face_3d.py), MediaPipe's effect renderer
// (modules/face_geometry/libs/effect_renderer.cc) in WebGPU: per face (instance i) its pose
// (canonical face -> camera space, cm) and its metric mesh, both left on the GPU by the
// face geometry (FaceGeometryGpu: poses, 5 vec4 a face, the last (valid, ...); mesh, 468
// vec4 a face); `params.projection` is the environment's perspective made WebGPU's
// (app/effects/face_3d.py projection()). Entry points:
// - vs_occluder + fs_occluder: the face mesh moved 1 mm away from the camera, into the
//   depth buffer only (MediaPipe's OCCLUSION mode: its colour writes are off);
// - vs_paint + fs_texture: the face mesh textured through the canonical UVs;
// - vs_object + fs_texture: a 3D object (vertex buffer x y z u v) placed by the pose.
// A face whose valid flag is 0 puts its vertices outside the clip volume: nothing drawn.

{{ bindings.params }}
{{ bindings.poses }}
{{ bindings.mesh }}
{{ bindings.uv }}
{{ bindings.effect_texture }}
{{ bindings.effect_sampler }}

struct Params {
  projection: mat4x4<f32>,
};

const NV: u32 = 468u;
// effect_renderer.cc: "the pose transformation is moved ~1mm away from camera in order to
// allow the face mesh texture to be rendered without failing the depth test"
const OCCLUDER_SHIFT_CM: f32 = 0.1;

struct VsOut {
  @builtin(position) pos: vec4<f32>,
  @location(0) uv: vec2<f32>,
};

fn pose_of(face: u32) -> mat4x4<f32> {
  let at = face * 5u;
  return mat4x4<f32>(poses[at], poses[at + 1u], poses[at + 2u], poses[at + 3u]);
}

fn place(face: u32, p: vec3<f32>, shift: f32, uv: vec2<f32>) -> VsOut {
  var pose = pose_of(face);
  pose[3].z -= shift;
  var out: VsOut;
  out.pos = params.projection * pose * vec4<f32>(p, 1.0);
  if (poses[face * 5u + 4u].x < 0.5) {
    out.pos = vec4<f32>(2.0, 2.0, 2.0, 1.0);  // no face in this slot: clipped away
  }
  out.uv = uv;
  return out;
}

@vertex
fn vs_occluder(@builtin(vertex_index) v: u32, @builtin(instance_index) face: u32) -> VsOut {
  return place(face, mesh[face * NV + v].xyz, OCCLUDER_SHIFT_CM, vec2<f32>(0.0));
}

@vertex
fn vs_paint(@builtin(vertex_index) v: u32, @builtin(instance_index) face: u32) -> VsOut {
  return place(face, mesh[face * NV + v].xyz, 0.0, uv[v]);
}

@vertex
fn vs_object(@location(0) p: vec3<f32>, @location(1) uv: vec2<f32>,
             @builtin(instance_index) face: u32) -> VsOut {
  return place(face, p, 0.0, uv);
}

@fragment
fn fs_occluder(in: VsOut) -> @location(0) vec4<f32> {
  return vec4<f32>(0.0);  // the pipeline's write mask drops it: depth only
}

@fragment
fn fs_texture(in: VsOut) -> @location(0) vec4<f32> {
  return textureSample(effect_texture, effect_sampler, in.uv);
}
