"""check_plan: independent validation of any plan against its usage records."""

from __future__ import annotations

from collections.abc import Sequence

from engine.memory.plan import ArenaPlan, ObjectPlan, Plan, TexturePlan
from engine.memory.records import TensorUsage, overlaps


def check_plan(records: Sequence[TensorUsage], plan: Plan) -> list[str]:
    """Problems with `plan` (empty when valid).

    - every record's tensor is placed exactly once, and nothing else is;
    - each tensor fits its object (bytes, or all three texture extents) or its
      byte range lies inside the arena at an aligned offset;
    - no two tensors whose lifetimes overlap share an object or a byte.
    """
    errors: list[str] = []
    ids = [r.tensor for r in records]
    if len(set(ids)) != len(ids):
        errors.append("records repeat a tensor id")
    placement = plan.offsets if isinstance(plan, ArenaPlan) else plan.assignment
    if set(placement) != set(ids):
        missing, extra = set(ids) - set(placement), set(placement) - set(ids)
        errors.append(f"plan misses tensors {sorted(missing)[:5]}, has extra {sorted(extra)[:5]}")
        return errors
    if isinstance(plan, ArenaPlan):
        return errors + _check_arena(records, plan)
    return errors + _check_objects(records, plan)


def _check_objects(records: Sequence[TensorUsage], plan: ObjectPlan | TexturePlan) -> list[str]:
    errors: list[str] = []
    users: dict[int, list[TensorUsage]] = {}
    for r in records:
        obj = plan.assignment[r.tensor]
        if not 0 <= obj < plan.objects:
            errors.append(f"tensor {r.tensor}: object {obj} does not exist")
            continue
        users.setdefault(obj, []).append(r)
        if isinstance(plan, ObjectPlan) and r.size > plan.object_sizes[obj]:
            errors.append(
                f"tensor {r.tensor}: {r.size} B > object {obj} {plan.object_sizes[obj]} B"
            )
        if isinstance(plan, TexturePlan):
            errors += _check_texture(r, plan, obj)
    for obj, rs in users.items():
        rs.sort(key=lambda r: r.first)
        for k, a in enumerate(rs):
            for b in rs[k + 1 :]:
                if b.first > a.last:
                    break
                if _layers_meet(plan, a, b):
                    errors.append(
                        f"object {obj}: tensors {a.tensor} and {b.tensor} overlap in time"
                    )
    return errors


def _check_texture(r: TensorUsage, plan: TexturePlan, obj: int) -> list[str]:
    """A texture tensor's folded footprint lies inside its object, its texels match."""
    if r.extent is None:
        return [f"tensor {r.tensor}: no texture extent"]
    tiles = plan.tiles.get(r.tensor, (1, 1))
    if min(tiles) < 1 or plan.layers.get(r.tensor, 0) < 0:
        return [f"tensor {r.tensor}: tiles {tiles} or layer {plan.layers.get(r.tensor)} invalid"]
    w, h, layer, count = plan.footprint(r.tensor, r.extent)
    have = plan.extents[obj]
    if w > have[0] or h > have[1] or layer + count > have[2]:
        return [f"tensor {r.tensor}: extent {r.extent} (tiles {tiles}, layer {layer}) > object "
                f"{obj} {have}"]  # fmt: skip
    if r.texel_bytes != plan.texel_bytes:
        return [f"tensor {r.tensor}: texel {r.texel_bytes} B != {plan.texel_bytes} B"]
    return []


def _layers_meet(plan: ObjectPlan | TexturePlan, a: TensorUsage, b: TensorUsage) -> bool:
    """Whether two tensors of one object, alive at once, would share memory: always for
    buffers; for textures when their layer ranges meet."""
    if isinstance(plan, ObjectPlan) or a.extent is None or b.extent is None:
        return True
    _, _, a0, na = plan.footprint(a.tensor, a.extent)
    _, _, b0, nb = plan.footprint(b.tensor, b.extent)
    return a0 < b0 + nb and b0 < a0 + na


def _check_arena(records: Sequence[TensorUsage], plan: ArenaPlan) -> list[str]:
    errors: list[str] = []
    for r in records:
        offset = plan.offsets[r.tensor]
        if offset < 0 or offset % plan.alignment:
            errors.append(f"tensor {r.tensor}: offset {offset} not a multiple of {plan.alignment}")
        if offset + r.size > plan.size:
            errors.append(f"tensor {r.tensor}: [{offset}, {offset + r.size}) past {plan.size}")
    for k, a in enumerate(records):
        lo_a = plan.offsets[a.tensor]
        for b in records[k + 1 :]:
            lo_b = plan.offsets[b.tensor]
            shared = lo_a < lo_b + b.size and lo_b < lo_a + a.size and a.size and b.size
            if shared and overlaps(a, b):
                errors.append(f"tensors {a.tensor} and {b.tensor} share bytes while both live")
    return errors
