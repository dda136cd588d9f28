"""dispatch_cost: the chain really runs N dependent dispatches; the slope arithmetic."""

from __future__ import annotations

import numpy as np
import pytest

from benchmarks.engine.dispatch_cost import Chain, main, per_dispatch_ms
from engine.gpu.device import shared_context


def test_per_dispatch_cost_is_the_slope_between_the_extreme_chains():
    # 1 dispatch 0.2 ms, 201 dispatches 4.2 ms: (4.2 - 0.2) / 200 = 0.02 ms each
    assert per_dispatch_ms({1: 0.2, 50: 9.9, 201: 4.2}) == pytest.approx(0.02)
    with pytest.raises(ValueError):
        per_dispatch_ms({5: 1.0})


@pytest.mark.gpu
def test_each_dispatch_of_a_chain_runs():
    ctx = shared_context()
    chain = Chain(ctx, max_groups=2)
    before = np.frombuffer(ctx.device.queue.read_buffer(chain.data), np.float32).copy()
    chain.run(7, 2)  # 7 dispatches x 2 groups of 64: every element +7
    chain.run(3, 1)  # the first 64 elements +3 more
    after = np.frombuffer(ctx.device.queue.read_buffer(chain.data), np.float32)
    assert np.array_equal(after[:64] - before[:64], np.full(64, 10.0, np.float32))
    assert np.array_equal(after[64:] - before[64:], np.full(64, 7.0, np.float32))


@pytest.mark.gpu
def test_cli_prints_a_row_per_group_count(capsys):
    assert main(["--chains", "1,4", "--groups", "1,2", "--repeat", "2"]) == 0
    out = capsys.readouterr().out
    assert "| 1 | " in out and "| 2 | " in out and "per dispatch ms" in out


def test_cli_refuses_a_single_chain_length():
    with pytest.raises(SystemExit):
        main(["--chains", "5,5"])


def test_cli_refuses_no_repeats():
    with pytest.raises(SystemExit) as exit_:
        main(["--repeat", "0"])
    assert exit_.value.code == 2
