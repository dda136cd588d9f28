"""TuneCache: write/read, warm cache does no timing, versions, corrupt files."""

from __future__ import annotations

import json
import warnings

import pytest

from engine.gpu.workgroups import AdapterKey, DeviceLimits, TuneCache, choose, tune
from engine.gpu.workgroups.cache import VERSION, default_dir
from tests.helpers.workgroups import CountingTimer, conv, scrambled

LAVAPIPE = AdapterKey.from_info(
    {
        "vendor": "llvmpipe",
        "device": "llvmpipe (LLVM 15.0.6, 256 bits)",
        "description": "Mesa 22.3.6 (LLVM 15.0.6)",
        "backend_type": "Vulkan",
    }
)
LIM = DeviceLimits()


def test_adapter_key():
    assert LAVAPIPE.driver == "Mesa 22.3.6 (LLVM 15.0.6)" and LAVAPIPE.backend == "Vulkan"
    other = AdapterKey("llvmpipe", LAVAPIPE.device, LAVAPIPE.driver, "OpenGL")
    assert other.file_name() != LAVAPIPE.file_name()
    assert default_dir().name == "workgroups" and "webgpu-ar" in str(default_dir())


def test_second_tune_with_warm_cache_does_no_timing(tmp_path):
    sig = conv((64, 64, 16))
    first = CountingTimer(scrambled)
    tuned = tune(sig, LIM, first, cache=TuneCache(LAVAPIPE, tmp_path))
    assert first.calls > 0 and tuned.timed > 0
    data = json.loads((tmp_path / LAVAPIPE.file_name()).read_text())
    assert data["version"] == VERSION and data["adapter"]["backend"] == "Vulkan"
    assert data["entries"][sig.key()]["method"] == "exhaustive"

    second = CountingTimer(scrambled)
    again = tune(sig, LIM, second, cache=TuneCache(LAVAPIPE, tmp_path))  # a new process
    assert second.calls == 0 and again.timed == 0
    assert again.choice.candidate == tuned.choice.candidate and again.ms == tuned.ms
    assert again.choice.source == "cache"
    assert choose(sig, LIM, "tune", cache=TuneCache(LAVAPIPE, tmp_path)).source == "cache"
    assert not list(tmp_path.glob("*.tmp"))  # the atomic write left nothing behind


def test_entries_are_per_signature_method_and_limits(tmp_path):
    cache = TuneCache(LAVAPIPE, tmp_path)
    tune(conv((64, 64, 16)), LIM, scrambled, method="descent", cache=cache)
    timer = CountingTimer(scrambled)
    tune(conv((64, 64, 16)), LIM, timer, method="exhaustive", cache=cache)
    assert timer.calls > 0  # a descent result does not answer an exhaustive request
    timer.calls = 0
    tune(conv((64, 64, 16)), LIM, timer, method="descent", cache=cache)
    assert timer.calls == 0  # an exhaustive one answers a descent request
    tune(conv((32, 32, 16)), LIM, timer, cache=cache)
    assert timer.calls > 0  # another signature
    assert len(json.loads(cache.path.read_text())["entries"]) == 2
    timer.calls = 0
    small = DeviceLimits(max_invocations=8, max_size=(8, 8, 8))
    tune(conv((64, 64, 16)), small, timer, cache=cache)  # cached group not allowed here
    assert timer.calls > 0


def test_choose_tune_without_timer_needs_a_warm_cache(tmp_path):
    with pytest.raises(ValueError, match="time_fn"):
        choose(conv(), LIM, "tune", cache=TuneCache(LAVAPIPE, tmp_path))


@pytest.mark.parametrize(
    "text, why",
    [
        ("{not json", "corrupt"),
        ('{"version": 1}', "no entries"),
        ("[1, 2]", "no entries"),
        (json.dumps({"version": VERSION + 1, "entries": {}}), "version"),
    ],
)
def test_bad_files_are_ignored_with_a_warning(tmp_path, text, why):
    path = tmp_path / LAVAPIPE.file_name()
    path.write_text(text)
    timer = CountingTimer(scrambled)
    with pytest.warns(UserWarning, match=why) as record:
        tune(conv(), LIM, timer, cache=TuneCache(LAVAPIPE, tmp_path))
    assert str(path) in str(record[0].message)
    assert timer.calls > 0
    assert json.loads(path.read_text())["version"] == VERSION  # rewritten, readable again
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert tune(conv(), LIM, timer, cache=TuneCache(LAVAPIPE, tmp_path)).timed == 0


def test_bad_entry_is_a_miss_with_a_warning(tmp_path):
    sig = conv()
    entry = {"workgroup": "8x8", "work": [1, 1, 1], "ms": 1.0, "method": "exhaustive"}
    data = {"version": VERSION, "entries": {sig.key(): entry}}
    (tmp_path / LAVAPIPE.file_name()).write_text(json.dumps(data))
    with pytest.warns(UserWarning, match="bad entry"):
        assert TuneCache(LAVAPIPE, tmp_path).get(sig, LIM, "exhaustive") is None


def test_unwritable_cache_warns_and_still_answers(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.warns(UserWarning) as record:
        result = tune(conv(), LIM, scrambled, cache=TuneCache(LAVAPIPE, blocker))
    assert result.timed > 0
    messages = " | ".join(str(w.message) for w in record)
    assert "unreadable" in messages and "cannot write" in messages
