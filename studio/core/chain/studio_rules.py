"""Every rule the studio fixes where the pleach seed is silent, in one list for the interface.

Each module keeps the rules it applies beside its code; where two modules state the same rule,
the one closer to the behaviour (the built-in hook or the chain run) gives the text.
"""

from __future__ import annotations

from studio.core.chain.builtins import BUILTIN_STUDIO_RULES
from studio.core.chain.config import CONFIG_STUDIO_RULES
from studio.core.chain.run import CHAIN_STUDIO_RULES
from studio.core.chain.shapes import STUDIO_RULES, StudioRule


def all_studio_rules() -> list[StudioRule]:
    merged: dict[str, StudioRule] = {}
    for rule in (*STUDIO_RULES, *BUILTIN_STUDIO_RULES, *CHAIN_STUDIO_RULES, *CONFIG_STUDIO_RULES):
        merged[rule.id] = rule
    return list(merged.values())


def find_studio_rule(rule_id: str) -> StudioRule | None:
    return next((r for r in all_studio_rules() if r.id == rule_id), None)
