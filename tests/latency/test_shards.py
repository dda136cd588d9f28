"""engine-latency measure --shard / --lock: K processes split the jobs and take turns on
the adapter (measure.parse_shard, measure.shard, measure.exclusive)."""

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
        got = measure.shard(list(range(total)), measure.parse_shard(f"{i}/{k}"))
        assert got == sorted(got)
        parts += got
    assert sorted(parts) == list(range(total))


def test_no_shard_keeps_every_job():
    assert measure.shard(list(range(5)), measure.parse_shard(None)) == list(range(5))


@pytest.mark.parametrize("spec", ["3/3", "-1/2", "1", "a/b", "1/0"])
def test_a_bad_shard_is_a_clear_error(spec):
    with pytest.raises(ValueError, match="--shard"):
        measure.parse_shard(spec)


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


def test_merge_puts_the_shards_back_in_the_measured_order(tmp_path, capsys):
    from engine.latency import dataset
    from engine.latency.cli import main

    source = dataset.read_rows("data/latency/nvidia-h100.csv.gz")[:7]
    order = tmp_path / "order.csv.gz"
    dataset.append_rows(order, source)
    parts = []
    for i in range(3):
        parts.append(tmp_path / f"part-{i}.csv.gz")
        dataset.append_rows(parts[-1], source[i::3][::-1])  # each shard in another order
    out = tmp_path / "all.csv.gz"
    argv = ["merge", str(out), *map(str, parts), "--order", str(order)]
    assert main(argv) == 0
    assert [r["hash"] for r in dataset.read_rows(out)] == [r["hash"] for r in source]
    assert main(argv) == 2  # out exists: nothing overwritten
    assert main(["merge", str(tmp_path / "x.csv.gz"), str(parts[0]), str(parts[0])]) == 2
    assert "in another part too" in capsys.readouterr().err


@pytest.mark.parametrize("with_lock", [True, False])
def test_run_holds_the_lock_while_it_times_and_profiles(tmp_path, monkeypatch, with_lock):
    import fcntl
    from types import SimpleNamespace

    from engine.latency.dispatches import AdapterProfile
    from tests.helpers.latency import PROFILE

    lock = tmp_path / "measure.lock"
    seen = []

    def held() -> None:  # is the lock taken (by run(), through another open file)?
        with open(lock, "a") as f:
            try:
                fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                seen.append(True)
                return
            fcntl.flock(f, fcntl.LOCK_UN)
            seen.append(False)

    engine = SimpleNamespace(run=lambda feeds: held())
    monkeypatch.setattr(AdapterProfile, "from_context", staticmethod(lambda ctx: PROFILE))
    monkeypatch.setattr(
        measure, "prepare", lambda job, *a: measure.Prepared(job, {}, [], engine, {})
    )
    monkeypatch.setattr(
        measure, "finish", lambda p, *a: held() or {"engine_median_ms": 1.0, "load_avg": 0}
    )
    monkeypatch.setattr(measure.dataset, "append_rows", lambda out, rows: None)
    jobs = [measure.Job(f"h{i}", None, b"") for i in range(3)]
    protocol = measure.Protocol(warmup=1, runs=2, block=1)
    n = measure.run(jobs, 3, tmp_path / "d.csv.gz", None, protocol=protocol, progress=False,
                    lock=lock if with_lock else None)  # fmt: skip
    assert n == 3
    assert len(seen) == 3 * (1 + 2 + 2) + 3  # warm-up, timed and untimed runs; finish()
    assert set(seen) == {with_lock}
