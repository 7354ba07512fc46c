"""One check of a returned pre-LLM request: its rule ids, the words of its findings, the
JSON-safety walk (rule 8) and the :class:`Check` that collects what the rules find."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any

from studio.core.findings import Finding, PathPart, dotted
from studio.core.json.values import (
    CYCLE,
    FINITE_INT_BOUND,
    JsonProblem,
    int_is_finite,
    is_number,
    json_problems,
    key_problem,
)

RULE_OBJECT = "adf.request.1"
RULE_SYSTEM = "adf.request.2"
RULE_MESSAGES = "adf.request.3"
RULE_BLOCKS = "adf.request.4"
RULE_PAIRING = "adf.request.5"
RULE_TOOLS = "adf.request.6"
RULE_OPTIONS = "adf.request.7"
RULE_JSON = "adf.request.8"
RULE_NOT_ENABLED = "adf.request.presented_not_enabled"

Path = tuple[PathPart, ...]

MISSING: Any = object()
"""What an absent key reads as, told apart from ``null``."""

_LONG_PATH = 48
_FAST_DEPTH = 48
_FAST_BUDGET = 2048


# ---------------------------------------------------------------------------------------------
# Words


def loc(path: Path) -> str:
    """``request.messages[2].content[0]``; a very deep path keeps its head and its tail."""
    if len(path) <= _LONG_PATH:
        return dotted(path, "request")
    head = dotted(path[:16], "request")
    tail = dotted(path[-16:], "x")[1:]
    return f"{head}…({len(path) - 32} more levels)…{tail}"


def finite(value: object) -> bool:
    """A finite JSON number (never a bool); an int too large for a double is not finite."""
    if not is_number(value):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:
        return False


def article(word: str) -> str:
    return "an" if word[:1] in "aeiou" else "a"


def got(value: object) -> str:
    """What a value is, for a message: ``null``, ``2.0001``, ``"system"``, ``an array``."""
    if value is MISSING:
        return "nothing (the key is missing)"
    if value is None:
        return "null"
    t = type(value)
    if t is bool:
        return "true" if value else "false"
    if t is str:
        text: str = value  # type: ignore[assignment]
        return json.dumps(text) if len(text) <= 40 else "a string"
    if t is int:
        number: int = value  # type: ignore[assignment]
        if not int_is_finite(number):
            return "an integer too large for JSON (it reads as Infinity)"
        return str(number) if -(10**15) < number < 10**15 else "a very large integer"
    if t is float:
        real: float = value  # type: ignore[assignment]
        if math.isnan(real):
            return "NaN"
        if math.isinf(real):
            return "Infinity" if real > 0 else "-Infinity"
        return repr(real)
    if t is list:
        return "an array" if value else "an empty array"
    if t is dict:
        return "an object"
    return f"a Python {t.__name__}, which is not JSON"


# ---------------------------------------------------------------------------------------------
# Rule 8: the JSON-safety walk


def scan(value: object, ancestors: tuple[object, ...], clean: dict[int, int]) -> list[JsonProblem]:
    """Every place under ``value`` (itself included) that is not plain JSON.

    ``ancestors`` are the containers that hold ``value`` on the way down from the request:
    reaching one of them again is a cycle. ``clean`` holds containers already walked without a
    problem, so a value shared in many places is walked once.
    """
    t = type(value)
    # Most values are small and plain: a bounded recursive pass proves that cheaply. It cannot be
    # fooled by a cycle (a cycle never ends, so it runs out of depth), and any doubt sends the
    # value to the exact walk, which also finds what is wrong and where.
    if (t is dict or t is list) and _plain(value, _FAST_DEPTH, _FAST_BUDGET) >= 0:
        return []
    return list(json_problems(value, ancestors=ancestors, clean=clean))


def _plain(value: Any, depth: int, budget: int) -> int:
    """The budget left when ``value`` (a dict or list) is plain JSON no deeper than ``depth``
    levels and holds fewer than ``budget`` containers; -1 otherwise (not plain, or not sure)."""
    if type(value) is dict:
        for k, v in value.items():
            if type(k) is not str:
                return -1
            t = type(v)
            if t is str or t is bool or v is None:
                continue
            if t is int:
                if -FINITE_INT_BOUND < v < FINITE_INT_BOUND:
                    continue
                return -1
            if t is float:
                if v - v == 0.0:  # false for NaN and for the infinities
                    continue
                return -1
            if (t is dict or t is list) and depth:
                budget = _plain(v, depth - 1, budget - 1)
                if budget >= 0:
                    continue
            return -1
        return budget
    for v in value:
        t = type(v)
        if t is str or t is bool or v is None:
            continue
        if t is int:
            if -FINITE_INT_BOUND < v < FINITE_INT_BOUND:
                continue
            return -1
        if t is float:
            if v - v == 0.0:
                continue
            return -1
        if (t is dict or t is list) and depth:
            budget = _plain(v, depth - 1, budget - 1)
            if budget >= 0:
                continue
        return -1
    return budget


# ---------------------------------------------------------------------------------------------
# The check

Add = Callable[[Finding], None]


class Check:
    """One validation: the findings so far and the walk's memory of clean containers."""

    __slots__ = ("add", "clean", "deferred", "findings", "pairing")

    def __init__(self) -> None:
        self.findings: list[Finding] = []
        self.pairing: list[Finding] = []
        self.deferred: list[Finding] = []
        self.add: Add = self.findings.append
        self.clean: dict[int, int] = {}

    def problems(
        self,
        add: Add,
        base: Path,
        problems: list[JsonProblem],
        keep_self: bool = True,
    ) -> None:
        """Report a walk's problems; ``keep_self=False`` drops the walked value's own type
        problem, already told by a shape finding at the same place."""
        for rel, text in problems:
            if rel or keep_self or text == CYCLE:
                path = base + rel
                add(Finding(path, f"{loc(path)} {text}", RULE_JSON))

    def json(
        self,
        add: Add,
        base: Path,
        value: object,
        ancestors: tuple[object, ...],
        keep_self: bool = True,
    ) -> None:
        self.problems(add, base, scan(value, ancestors, self.clean), keep_self)

    def extras(
        self,
        add: Add,
        base: Path,
        obj: dict[Any, Any],
        known: frozenset[str],
        ancestors: tuple[object, ...],
    ) -> None:
        """Rule 8 for the keys of ``obj`` that the shape rules do not look at."""
        for k, v in obj.items():
            if type(k) is not str:
                add(Finding(base, f"{loc(base)} {key_problem(k)}", RULE_JSON))
            elif k not in known:
                t = type(v)
                if t is not str:
                    self.json(add, (*base, k), v, ancestors)


def shape(
    check: Check,
    path: Path,
    value: object,
    wanted: str,
    rule: str,
    *ancestors: object,
) -> None:
    """A value of the wrong shape: say so, then report what inside it is not JSON either."""
    add = check.add
    if value is MISSING:
        add(Finding(path, f"{loc(path)} is missing; it {wanted}", rule))
        return
    add(Finding(path, f"{loc(path)} {wanted}, got {got(value)}", rule))
    check.json(add, path, value, ancestors, keep_self=False)
