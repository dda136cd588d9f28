"""Intermediate-tensor memory planners: usage records in, shared objects or arena offsets out.

    records = usage_records(graph, bytes_per_element=4)
    stats = best_plan(records)          # PlanStats; stats.plan is the plan to allocate
    print(format_table(plan_all(records)))

Pure Python, no GPU. The planners are listed once, in registry.py. See docs/memory.md
for the strategies and the contract.
"""

from engine.memory.arena import DEFAULT_ALIGNMENT, arena
from engine.memory.check import check_plan
from engine.memory.greedy import greedy
from engine.memory.greedy_by_size import greedy_by_size
from engine.memory.mincostflow import mincostflow
from engine.memory.naive import naive, texture_naive
from engine.memory.plan import ArenaPlan, ObjectPlan, Plan, TexturePlan
from engine.memory.records import TensorUsage, lower_bound, naive_bytes, usage_records
from engine.memory.registry import PLANNERS, Planner, planner, planners_for
from engine.memory.summary import (
    BUFFER_STRATEGIES,
    STRATEGIES,
    TEXTURE_STRATEGIES,
    PlanStats,
    best_plan,
    format_table,
    plan_all,
    plan_with,
)
from engine.memory.texture import texture_greedy, texture_greedy_by_size
from engine.memory.texture_arena import texture_arena

__all__ = [
    "BUFFER_STRATEGIES",
    "PLANNERS",
    "DEFAULT_ALIGNMENT",
    "STRATEGIES",
    "TEXTURE_STRATEGIES",
    "ArenaPlan",
    "ObjectPlan",
    "Plan",
    "PlanStats",
    "Planner",
    "TensorUsage",
    "TexturePlan",
    "arena",
    "best_plan",
    "check_plan",
    "format_table",
    "greedy",
    "greedy_by_size",
    "lower_bound",
    "mincostflow",
    "naive",
    "naive_bytes",
    "plan_with",
    "plan_all",
    "planner",
    "planners_for",
    "texture_greedy",
    "texture_arena",
    "texture_greedy_by_size",
    "texture_naive",
    "usage_records",
]
