// Packed weights and bias of a conv-like kernel, and the slice range of one dispatch.
// Weights, bias and accumulators are f32 (A) at every storage precision: fp16
// tensors are converted on load, long sums keep fp32 accuracy.
// A split layer (`shared`) reads (first slice, slice count) from a buffer, so that all
// of the layer's dispatches share one pipeline (weights padded to whole groups).
{% macro declare(weight_space, weight_type, weight_count, dst_slices, shared, slice_base) %}
alias A = f32;
@group(0) @binding(2) var<{{ weight_space }}> weights: array<{{ weight_type }}<A>, {{ weight_count }}>;
@group(0) @binding(3) var<{{ weight_space }}> bias: array<vec4<A>, {{ dst_slices }}>;
{% if shared %}
@group(0) @binding(4) var<storage, read> part_of: vec4<A>;
fn first_slice() -> u32 { return u32(part_of.x); }
fn slice_count() -> u32 { return u32(part_of.y); }
{% else %}
fn first_slice() -> u32 { return {{ slice_base }}u; }
fn slice_count() -> u32 { return {{ dst_slices }}u; }
{% endif %}
{% endmacro %}
