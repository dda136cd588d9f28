"""Shapes as run-time values: the uniform `G` of the compact kernel set's shared kernels.

The optimized kernels bake every shape into their WGSL, so each layer is a pipeline of
its own. The compact set exists for start-up, where each pipeline costs more to compile
(50-90 ms of LLVM per shader at its first dispatch on lavapipe, whatever its size) than
to run. Its 1x1 and depthwise kernels read their shapes from a small uniform instead:
one pipeline serves every layer with the same storage kinds and epilogue
(docs/architecture.md, "Kernel sets").

A Params is an ordered list of named 32-bit integers. The template declares them as
`struct Params` (shaders/engine/params.wgsl) and reads `G.<name>`; the dispatch binds
their values, packed in the same order, as a uniform.
"""

from __future__ import annotations

import numpy as np

from engine.gpu.kernels.base import MAX_GROUPS, Binding, ceil_div

# The shared kernels' work group: 64 invocations along a flat index over the outputs.
GROUP = 64


class Params:
    def __init__(self) -> None:
        self.fields: list[tuple[str, str]] = []  # (name, "i32" | "u32"), the template's
        self.values: list[int] = []

    def add(self, name: str, wgsl_type: str, value: int) -> None:
        if wgsl_type not in ("i32", "u32") or (wgsl_type == "u32" and value < 0):
            raise ValueError(f"param {name}: {value} as {wgsl_type}")
        self.fields.append((name, wgsl_type))
        self.values.append(int(value))

    def add_all(self, wgsl_type: str, **values: int) -> None:
        """Several fields of one type, in the order given."""
        for name, value in values.items():
            self.add(name, wgsl_type, value)

    def add_tiles(self, arg: dict) -> dict:
        """`arg` (a tensor_arg) reading its texture tiles from G, when it is a texture:
        (across, down, width, rows) as in BuildContext.texture_tiles; an unfolded texture
        is 1 x 1 tiles. Buffers are returned as they are."""
        if arg["kind"] != "texture":
            return arg
        across, down, w, rows = arg["tiles"] or (1, 1, 0, 0)
        name = arg["name"]
        self.add_all("u32", **{f"{name}_across": across, f"{name}_down": down,
                               f"{name}_tw": w, f"{name}_th": rows})  # fmt: skip
        return {**arg, "param": True}

    def binding(self) -> Binding:
        """The uniform G (params.wgsl `declare` writes its struct)."""
        data = np.array(self.values, np.int32)
        return Binding("const", data=data, space="uniform", dtype="i32", name="G", type="Params")


def fixed_bindings(
    src: dict, dst: dict, weights: np.ndarray, bias: np.ndarray, params: Params, matrix: str
) -> tuple:
    """The shared kernels' first bindings: input and output (tensor args), f32 weights (a
    `matrix`, mat4x4 or vec4, per entry) and bias in runtime-sized storage arrays, the
    uniform G."""
    return (
        src["binding"],
        dst["binding"],
        Binding("const", data=weights.reshape(-1), space="storage", dtype="f32",
                name="weights", type=f"array<{matrix}<A>>"),
        Binding("const", data=bias.reshape(-1), space="storage", dtype="f32", name="bias",
                type="array<vec4<A>>"),
        params.binding(),
    )  # fmt: skip


def flat_grid(count: int) -> tuple[int, int, int]:
    """Work groups of GROUP invocations covering `count` outputs (shaders/engine/params.wgsl
    `main`): one row of groups, more rows past the per-dimension limit."""
    groups = max(1, ceil_div(count, GROUP))
    return min(groups, MAX_GROUPS), ceil_div(groups, MAX_GROUPS), 1
