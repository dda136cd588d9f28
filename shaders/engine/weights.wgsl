// Packed weights and bias of a conv-like kernel, and the slice range of one dispatch.
// Weights, bias and accumulators are f32 (A) at every storage precision: fp16
// tensors are converted on load, long sums keep fp32 accuracy.
// A split layer (`shared`) reads (first slice, slice count) from a buffer, so that all
// of the layer's dispatches share one pipeline (weights padded to whole groups).
{# `bindings`: the template's, with weights, bias and (shared) part_of (engine/gpu/kernels/
   common.py weight_bindings). #}
{% macro declare(bindings, dst_slices, shared, slice_base) %}
alias A = f32;
{{ bindings.weights }}
{{ bindings.bias }}
{% if shared %}
{{ bindings.part_of }}
fn first_slice() -> u32 { return u32(part_of.x); }
fn slice_count() -> u32 { return u32(part_of.y); }
{% else %}
fn first_slice() -> u32 { return {{ slice_base }}u; }
fn slice_count() -> u32 { return {{ dst_slices }}u; }
{% endif %}
{% endmacro %}
