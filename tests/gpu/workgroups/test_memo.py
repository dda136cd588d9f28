"""The heuristic's disk memo: the same answer as ranking, read back by a new process."""

import json
import sys

from engine.gpu.workgroups import DeviceLimits, heuristic, memo
from engine.gpu.workgroups.heuristic import ranked
from tests.helpers.workgroups import conv, depthwise


def test_memo_returns_what_ranking_returns(tmp_path, monkeypatch):
    monkeypatch.setenv("ENGINE_CACHE_DIR", str(tmp_path))
    from engine import config

    config.reload()
    limits = DeviceLimits(max_invocations=256, subgroup_min=8, subgroup_max=8,
                          parallel_units=8)  # fmt: skip
    sigs = [conv((64, 64, 16)), depthwise((32, 32, 8)), conv((7, 7, 40))]
    monkeypatch.setattr(memo, "_tables", {})
    heuristic.cache_clear()
    first = [heuristic(s, limits) for s in sigs]
    assert first == [ranked(s, limits) for s in sigs]
    memo.flush()
    (path,) = (tmp_path / "heuristic").glob("*.json")
    assert set(json.loads(path.read_text())) == {s.key() for s in sigs}
    monkeypatch.setattr(memo, "_tables", {})  # a new process: from the file
    heuristic.cache_clear()
    module = sys.modules["engine.gpu.workgroups.heuristic"]  # the package exports the function
    monkeypatch.setattr(module, "ranked", lambda *a: 1 / 0)  # must not rank again
    again = [heuristic(s, limits) for s in sigs]
    assert again == first
    assert all(c.source == "heuristic" for c in again)
