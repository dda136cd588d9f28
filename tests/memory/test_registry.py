"""The planner registry: one line per planner; every list of planners derives from it."""

import pytest

from engine.memory import PLANNERS, planner, planners_for
from engine.memory.summary import BUFFER_STRATEGIES, TEXTURE_STRATEGIES


def test_kinds_and_strategy_names():
    # the planners there are now (the registry may grow: nothing here lists it again)
    assert planners_for("buffer")[:5] == (
        "naive",
        "greedy",
        "greedy_by_size",
        "mincostflow",
        "arena",
    )
    assert planners_for("texture")[:4] == ("naive", "greedy", "greedy_by_size", "arena")
    assert "mincostflow" not in planners_for("texture")
    assert list(BUFFER_STRATEGIES) == list(planners_for("buffer"))
    assert list(TEXTURE_STRATEGIES) == [f"texture_{n}" for n in planners_for("texture")]
    assert all(p.description for p in PLANNERS.values())


def test_errors_name_the_choices():
    with pytest.raises(ValueError, match="known: naive"):
        planner("best_fit")
    with pytest.raises(ValueError, match="for textures use naive, greedy, greedy_by_size, arena"):
        planner("mincostflow", "texture")
    with pytest.raises(ValueError, match="storage kind"):
        planners_for("heap")


def test_the_app_and_engine_read_the_registry():
    from app.options import PLANNER_CHOICES
    from engine.gpu.compile import check_planners

    assert PLANNER_CHOICES == ("best", *PLANNERS)
    check_planners("mincostflow", None, "buffer")
    with pytest.raises(ValueError, match="does not plan textures"):
        check_planners("mincostflow", None, "texture")
    check_planners("mincostflow", "texture_greedy", "texture")  # textures planned apart
