"""engine/config.py: every ENGINE_* knob in one table, parsed once, bad values named."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from engine import config
from engine.config import KNOBS, Settings
from tests.helpers.files import ROOT


def test_values_are_parsed_and_defaults_are_none():
    assert Settings.from_env({}) == Settings()
    s = Settings.from_env({"ENGINE_DEBUG": "2", "ENGINE_STORAGE": " Texture ",
                           "ENGINE_COMPILE_THREADS": "3", "ENGINE_DATA_DIR": "/tmp/d"})  # fmt: skip
    assert (s.debug, s.storage, s.compile_threads, s.data_dir) == (2, "texture", 3, Path("/tmp/d"))
    assert Settings.from_env({"ENGINE_DEBUG": ""}).debug == 0  # empty means unset


@pytest.mark.parametrize("name, value", [("ENGINE_DEBUG", "yes"), ("ENGINE_STORAGE", "image"),
                                         ("ENGINE_COMPILE_THREADS", "0")])  # fmt: skip
def test_a_bad_value_names_the_variable(name, value):
    with pytest.raises(ValueError, match=name):
        Settings.from_env({name: value})


def test_settings_are_read_once_until_reload(monkeypatch):
    monkeypatch.setenv("ENGINE_DEBUG", "1")
    assert config.reload().debug == 1
    monkeypatch.setenv("ENGINE_DEBUG", "3")
    assert config.settings().debug == 1  # cached
    assert config.reload().debug == 3


def test_every_engine_variable_in_the_code_is_a_knob():
    used = set()
    for package in ("engine", "app"):
        for path in (ROOT / package).rglob("*.py"):
            used |= set(re.findall(r"\bENGINE_[A-Z_]+\b", path.read_text()))
    assert used <= {k.env for k in KNOBS}, used - {k.env for k in KNOBS}
