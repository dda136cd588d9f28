// A model's dispatches behind a GPU-written condition (engine/gpu/gate.py): each
// dispatch's work group count, or 0 when the gate word is 0, as indirect dispatch args.
// A count of 0 records nothing on the GPU: a skipped model costs this one dispatch.

{{ bindings.gate }}
{{ bindings.grids }}
{{ bindings.args }}

const N: u32 = {{ n }}u;             // dispatches
const GATE_WORD: u32 = {{ word }}u;  // u32 index of the gate in its buffer

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  let i = gid.x;
  if (i >= N) {
    return;
  }
  args[i] = select(vec4<u32>(0u), grids[i], gate[GATE_WORD] != 0u);
}
