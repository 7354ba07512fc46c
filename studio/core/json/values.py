"""Predicates over decoded JSON values that agree with JavaScript's view of them, and the one
walk that finds where a Python value stops being plain JSON.

JSON booleans are never numbers here, although Python's ``bool`` is a subclass of ``int``.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Collection, Iterator
from typing import Any, Literal, TypeGuard

from studio.core.findings import PathPart

MAX_SAFE_INTEGER = 2**53 - 1


def is_number(value: Any) -> TypeGuard[int | float]:
    """A JSON number (int or float, never a bool), finite or not."""
    t = type(value)
    return (
        t is int or t is float or (isinstance(value, int | float) and not isinstance(value, bool))
    )


def is_finite_number(value: Any) -> TypeGuard[int | float]:
    return is_number(value) and math.isfinite(value)


def is_whole_number(value: Any) -> TypeGuard[int | float]:
    """An integer as ``Number.isInteger`` sees it: ``1000.0`` counts, ``true`` does not."""
    if type(value) is int:
        return True
    if isinstance(value, bool):
        return False
    if isinstance(value, float):
        return math.isfinite(value) and value.is_integer()
    return isinstance(value, int)


def is_safe_integer(value: Any) -> TypeGuard[int | float]:
    """JavaScript's ``Number.isSafeInteger``."""
    return is_whole_number(value) and -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER


def type_name(value: Any) -> str:
    """The JSON name of a value's type, for messages: ``got a boolean``."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        if isinstance(value, float) and not math.isfinite(value):
            return "a non-finite number"
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return f"a Python {type(value).__name__}, which is not JSON"


# ---------------------------------------------------------------------------------------------
# Plain JSON: the one walk every contract uses

Path = tuple[PathPart, ...]
JsonProblem = tuple[Path, str]
LargeInts = Literal["infinite", "unwritable", "allowed"]
"""What an integer too large for a double is: ``"infinite"``, as a JavaScript runtime reads it;
``"unwritable"`` only when Python cannot write it (more than 4300 digits); or ``"allowed"``."""

CYCLE = "contains itself (a cycle), which JSON cannot hold"
FINITE_INT_BOUND = 2**1000
"""Every int of smaller magnitude is a finite double; for a larger one, ask float()."""
# Python refuses to write or read integers longer than this many digits (sys.int_info).
_UNWRITABLE_INT = 10**4300


def int_is_finite(value: int) -> bool:
    """Whether an integer fits a double; one too large for it reads as Infinity."""
    if -FINITE_INT_BOUND < value < FINITE_INT_BOUND:
        return True
    try:
        float(value)
    except OverflowError:
        return False
    return True


def key_problem(key: Any) -> str:
    """What is wrong with an object key that is not a string, as a phrase after its object's path.

    Runs no code of the key's own: a hostile ``__repr__`` cannot break a message.
    """
    t = type(key)
    short = key is None or t is bool or t is float or (t is int and -(10**15) < key < 10**15)
    shown = repr(key) if short else f"of type {t.__name__}"
    return f"has a key {shown} that is not a string; JSON object keys are strings"


def _leaf_problem(value: Any, exact_types: bool, large_ints: LargeInts) -> str | None:
    """Why a value that is not a dict or a list is not plain JSON, or None when it is."""
    t = type(value)
    if t is str or t is bool or value is None:
        return None
    if t is int or (not exact_types and isinstance(value, int)):
        if -FINITE_INT_BOUND < value < FINITE_INT_BOUND or large_ints == "allowed":
            return None
        if large_ints == "infinite" and not int_is_finite(value):
            return "is an integer too large for JSON (it reads as Infinity)"
        if large_ints == "unwritable" and abs(value) >= _UNWRITABLE_INT:
            return "is an integer with too many digits to be written as JSON"
        return None
    if t is float or (not exact_types and isinstance(value, float)):
        if value - value == 0.0:  # false for NaN and for the infinities
            return None
        shown = "NaN" if math.isnan(value) else "Infinity" if value > 0 else "-Infinity"
        return f"is {shown}, which JSON cannot hold"
    if not exact_types and isinstance(value, str):
        return None
    return f"is a Python {t.__name__}, which is not JSON"


def json_problems(
    value: Any,
    *,
    exact_types: bool = True,
    large_ints: LargeInts = "infinite",
    max_depth: int | None = None,
    depth: int = 0,
    max_nodes: int | None = None,
    ancestors: Collection[object] = (),
    clean: dict[int, int] | None = None,
) -> Iterator[JsonProblem]:
    """Every place in ``value`` (itself included) that is not plain JSON, in document order.

    Each problem is the path relative to ``value`` and a phrase to put after that path's name
    (``is NaN, which JSON cannot hold``). A non-string key is reported at its object's path,
    before anything inside that object, and the value under it is not looked at. Plain JSON is
    ``dict`` with string keys, ``list``, ``str``, ``int``, finite ``float``, ``bool`` and
    ``None``:

    - ``exact_types``: subclasses of those types are not plain (with False, they are);
    - ``large_ints``: see :data:`LargeInts`;
    - ``max_depth``: an object or array nested ``max_depth`` levels down is too deep (and not
      looked into); ``depth`` is how far down ``value`` itself already sits;
    - ``max_nodes``: the walk stops, with a problem, at the value past the first ``max_nodes``
      (a shared value counts each time it appears, so it is then walked every time);
    - ``ancestors``: containers that hold ``value``, so reaching one again is a cycle;
    - ``clean``: containers already walked without a problem (id to the deepest level where
      they are known clean), to keep across calls with the same options on values that stay
      alive, so that a value shared in many places is walked once.

    The walk is iterative, so no nesting depth raises RecursionError, and it tells a cycle from
    a shared value by the containers on the current path only.
    """
    loose = not exact_types
    if not (type(value) in (dict, list) or (loose and isinstance(value, dict | list))):
        problem = _leaf_problem(value, exact_types, large_ints)
        if problem is not None:
            yield (), problem
        return
    on_path = {id(a) for a in ancestors}
    if id(value) in on_path:
        yield (), CYCLE
        return
    too_deep = f"is nested deeper than {max_depth} levels"
    deepest = sys.maxsize if max_depth is None else max_depth
    if depth >= deepest:
        yield (), too_deep
        return
    counting = max_nodes is not None
    memo: dict[int, int] = {} if clean is None or counting else clean
    if depth <= memo.get(id(value), -1):
        return
    nodes = 1
    found = 0
    keys: list[PathPart] = []  # the path from the root to the container being walked
    open_: list[int] = []  # the id of each open container
    iters: list[Any] = []
    odd_keys: list[bool] = []  # whether each open object has a key that is not a string
    marks: list[int] = []  # problems found when each open container was entered
    entering: Any = value
    while True:
        if entering is not None:
            on_path.add(id(entering))
            open_.append(id(entering))
            marks.append(found)
            if isinstance(entering, dict):
                iters.append(iter(entering.items()))
                # An object's own problems come before anything inside it.
                odd = False
                for k in entering:
                    if type(k) is not str and not (loose and isinstance(k, str)):
                        odd = True
                        found += 1
                        yield tuple(keys), key_problem(k)
                odd_keys.append(odd)
            else:
                iters.append(enumerate(entering))
                odd_keys.append(False)
            entering = None
        if not iters:
            return
        skip_odd = odd_keys[-1]
        level = depth + len(keys) + 1  # how far down the children of this container sit
        for k, v in iters[-1]:
            if skip_odd and type(k) is not str and not (loose and isinstance(k, str)):
                continue  # told when the object was entered; the value under it is not JSON
            if counting:
                nodes += 1
                if nodes > max_nodes:  # type: ignore[operator]
                    yield (
                        (*keys, k),
                        f"lies past the first {max_nodes} parts of the value, more than it may "
                        "hold (a shared part counts each time it appears)",
                    )
                    return
            t = type(v)
            if t is str:
                continue
            if t is dict or t is list or (loose and isinstance(v, dict | list)):
                i = id(v)
                if i in on_path:
                    found += 1
                    yield (*keys, k), CYCLE
                    continue
                if level >= deepest:
                    found += 1
                    yield (*keys, k), too_deep
                    continue
                if not v or level <= memo.get(i, -1):
                    continue
                keys.append(k)
                entering = v
                break
            problem = _leaf_problem(v, exact_types, large_ints)
            if problem is not None:
                found += 1
                yield (*keys, k), problem
        else:
            done = open_.pop()
            iters.pop()
            odd_keys.pop()
            on_path.discard(done)
            if marks.pop() == found and not counting:
                # Clean this far down, so clean anywhere less deep.
                memo[done] = deepest if max_depth is None else depth + len(keys)
            if keys:
                keys.pop()


def json_problem(value: Any, **options: Any) -> JsonProblem | None:
    """The first place where ``value`` stops being plain JSON, or None when all of it is JSON.

    Takes the options of :func:`json_problems`.
    """
    return next(json_problems(value, **options), None)
