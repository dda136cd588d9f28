"""The effects: one per solution of engine.vision's registry, each drawing its results.

The effect of a solution is named by its registry entry (`effect`) and lives in the
module of that name (dashes as underscores), as the one Effect subclass it names
`EFFECT`; its class says which model roles it needs (--model order) and its styles.
The CLI's --effect, --solution and --style choices, the automatic choice from the models
(app/models.py) and the pipeline read `EFFECTS`. Adding an effect: its module (and its
solution's registry entry), a test.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass

from engine.vision import SOLUTIONS


@dataclass(frozen=True)
class EffectInfo:
    name: str
    cls: type  # the Effect subclass
    needs: tuple[str, ...]  # model roles (app/models.py model_role), in --model order
    styles: tuple[str, ...]  # the e key cycles through them; the first is the default
    solution: str  # `ar-demo --solution NAME`: the solution it draws (engine.vision)

    @property
    def models(self) -> tuple[str, ...]:
        """The manifest's models --solution runs (the solution's defaults)."""
        return SOLUTIONS[self.solution].models()


def _info(entry) -> EffectInfo:
    module = importlib.import_module(f"{__name__}.{entry.effect.replace('-', '_')}")
    cls = module.EFFECT
    return EffectInfo(entry.effect, cls, cls.needs, cls.styles, entry.name)


# in the registry's order: the automatic choice tries them in this order
EFFECTS: dict[str, EffectInfo] = {e.effect: _info(e) for e in SOLUTIONS.values()}
SOLUTION_EFFECTS: dict[str, EffectInfo] = {e.solution: e for e in EFFECTS.values()}


def effect_info(name: str) -> EffectInfo:
    if name not in EFFECTS:
        raise ValueError(f"unknown effect {name!r}; known: {', '.join(EFFECTS)}")
    return EFFECTS[name]


def effect_class(name: str):
    """The Effect subclass for an effect name."""
    return effect_info(name).cls
