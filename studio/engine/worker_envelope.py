"""What a Python worker's result frame may hold, checked before anything in it is used.

The worker runs the user's code, which can write its own frame on the result channel. So the
envelope is data to check, never a fact: its status, failure kind, traceback frames and the
``extra`` lists (``calls``, ``reads``) must have exactly the shapes the studio's worker writes;
anything else makes the run a ``channel_corrupted`` turn error.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

# The failures a worker reports itself; the others (timeout, output limit, ...) only the host
# decides.
WORKER_KINDS = frozenset(
    {
        "exception",
        "function_missing",
        "invalid_result",
        "load_failed",
        "memory_limit",
        "nested_lambda_failed",
        "source_missing",
        "source_outside_workspace",
        "worker_crashed",
    }
)
_FRAME_KEYS = {"file": str, "line": int, "function": str}
_CALL_TYPES: dict[str, tuple[type, ...]] = {
    "method": (str,),
    "gate": (str,),
    "depth": (int,),
    "duration_ms": (int, float),
    "answered_by": (str,),
    "output": (str,),
}


_NAMES = {str: "text", int: "a whole number", float: "a number"}


def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _frame_problem(frame: Any) -> str | None:
    if not isinstance(frame, dict) or set(frame) - {*_FRAME_KEYS, "code"}:
        return "a traceback frame of another shape"
    for key, kind in _FRAME_KEYS.items():
        value = frame.get(key)
        if not isinstance(value, kind) or (kind is int and not _whole(value)):
            return f"a traceback frame whose {key} is not {_NAMES[kind]}"
    if frame.get("code") is not None and not isinstance(frame["code"], str):
        return "a traceback frame whose code is not text"
    return None


def _call_problem(call: Any) -> str | None:
    if not isinstance(call, dict):
        return "a call that is not an object"
    for key, kinds in _CALL_TYPES.items():
        value = call.get(key)
        if value is None and key not in ("method", "gate"):
            continue
        if not isinstance(value, kinds) or isinstance(value, bool):
            return f"a call whose {key} is not {_NAMES[kinds[0]]}"
    if _whole(call.get("depth")) and call["depth"] < 0:
        return "a call with a negative depth"
    error = call.get("error")
    if error is not None and not (
        isinstance(error, dict)
        and isinstance(error.get("code"), str)
        and isinstance(error.get("message"), str)
    ):
        return "a call whose error is not a code and a message"
    return None


def _items_problem(items: Any, what: str, problem_of: Callable[[Any], str | None]) -> str | None:
    """Why ``items`` is not a list of well-formed entries (None, when absent, is fine)."""
    if items is None:
        return None
    if not isinstance(items, list):
        return f"{what} that is not a list"
    return next((p for p in map(problem_of, items) if p is not None), None)


def _object_problem(
    value: Any, what: str, problem_of: Callable[[dict[str, Any]], str | None]
) -> str | None:
    """Why ``value`` is not a well-formed object (None, when absent, is fine)."""
    if value is None:
        return None
    if not isinstance(value, dict):
        return f"{what} that is not an object"
    return problem_of(value)


def _extra_problem(extra: dict[str, Any]) -> str | None:
    if problem := _items_problem(extra.get("calls"), "a call log", _call_problem):
        return problem
    reads = extra.get("reads")
    if reads is not None and not isinstance(reads, list):
        return "reads that are not a list"
    return None


def _details_problem(details: dict[str, Any]) -> str | None:
    if problem := _items_problem(details.get("frames"), "a traceback", _frame_problem):
        return problem
    path = details.get("path")
    if path is not None and not (
        isinstance(path, list) and all(isinstance(p, str) or _whole(p) for p in path)
    ):
        return "a path that is not a list of keys and indexes"
    return None


def envelope_problem(envelope: Any) -> str | None:
    """Why ``envelope`` is not one the studio's worker writes; None when it is."""
    if not isinstance(envelope, dict):
        return "a value that is not an object"
    status = envelope.get("status")
    if status not in ("ok", "error"):
        return f"the status {status!r}"
    if problem := _object_problem(envelope.get("extra"), "extra", _extra_problem):
        return problem
    if status == "ok":
        return None if "value" in envelope else "an ok status without a value"
    kind = envelope.get("kind")
    if kind not in WORKER_KINDS:
        return f"the failure kind {kind!r}, which a worker does not report"
    if not isinstance(envelope.get("message"), str):
        return "a failure without a message"
    return _object_problem(envelope.get("details"), "failure details", _details_problem)
