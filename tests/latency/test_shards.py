"""engine-latency measure --shard / --lock: K processes split the jobs and take turns on
the adapter (measure.shard, measure.exclusive)."""

from __future__ import annotations

import threading
import time

import pytest

from engine.latency import measure


@pytest.mark.parametrize("total", [0, 1, 7, 12])
def test_shards_partition_the_jobs_in_order(total):
    k = 3
    parts = []
    for i in range(k):
        jobs, n = measure.shard(iter(range(total)), total, f"{i}/{k}")
        got = list(jobs)
        assert len(got) == n
        assert got == sorted(got)
        parts += got
    assert sorted(parts) == list(range(total))


def test_no_shard_keeps_every_job():
    jobs, n = measure.shard(iter(range(5)), 5, None)
    assert (list(jobs), n) == (list(range(5)), 5)


@pytest.mark.parametrize("spec", ["3/3", "-1/2", "1", "a/b", "1/0"])
def test_a_bad_shard_is_a_clear_error(spec):
    with pytest.raises(ValueError, match="--shard"):
        measure.shard(iter(()), 0, spec)


def test_the_lock_lets_one_holder_in_at_a_time(tmp_path):
    lock = tmp_path / "measure.lock"
    inside, most = [0], [0]
    guard = threading.Lock()

    def hold():
        for _ in range(5):
            with measure.exclusive(lock):
                with guard:
                    inside[0] += 1
                    most[0] = max(most[0], inside[0])
                time.sleep(0.005)
                with guard:
                    inside[0] -= 1

    threads = [threading.Thread(target=hold) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert most[0] == 1


def test_without_a_lock_the_block_runs_unguarded():
    with measure.exclusive(None):
        pass


def test_a_bad_shard_on_the_command_line_is_one_line_exit_2(capsys, monkeypatch):
    from engine.gpu import device
    from engine.latency.cli import main

    monkeypatch.setattr(device, "shared_context", lambda *a: pytest.fail("opened a device"))
    assert main(["measure", "--cells", "1", "--shard", "2/2"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["engine-latency: error: --shard 2/2: I must be in 0..K-1"]
