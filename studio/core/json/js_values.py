"""JavaScript values that JSON cannot carry, as a hook written in TypeScript returns them.

The node runtime snapshots a step hook's value in JavaScript terms (spec/crux.md §3), then sends
it as JSON. A value JSON cannot hold (``NaN``, ``Infinity``, a ``BigInt``, a function, a symbol,
a ``Date``) crosses as ``{"__studio_js__": kind, "text": ..., "truthy": ...}`` and is read back
here as a :class:`JsValue`, so that the judge meets it where the hook put it: a NaN budget limit
fails V10, a returned function fails V1, a NaN entry of ``use.add`` is falsy and skipped. Left
as ``null`` (what ``JSON.stringify`` makes of most of them) it would pass or fail other rules.

No object of the hook's can pass for a mark: the node side gives each key of the hook's own that
is the mark followed by zero or more ``~`` one ``~`` more, and :func:`js_value_hook` takes it off
again, so only the node side's own marks have the bare key.

A ``JsValue`` is a ``str`` holding the value's JavaScript text (``NaN``, ``12n``, ``[function
f]``, an ISO date), so it stays a JSON leaf for every walk over the amendment and shows as that
text in messages and in the run's JSON; :func:`studio.core.step.amendment.js_truthy` reads its
JavaScript truthiness.
"""

from __future__ import annotations

from typing import Any, Final, TypeGuard

MARK: Final = "__studio_js__"
_FIELDS: Final = frozenset({MARK, "text", "truthy"})
_ESCAPED: Final = MARK + "~"


class JsValue(str):
    """A JavaScript value JSON cannot hold: ``kind`` (``number``, ``bigint``, ``function``,
    ``symbol``, ``Date``), its text, and whether JavaScript counts it true."""

    kind: str
    truthy: bool

    def __new__(cls, text: str, kind: str, truthy: bool) -> JsValue:
        made = super().__new__(cls, text)
        made.kind = kind
        made.truthy = truthy
        return made

    def __repr__(self) -> str:
        return str(self)


def js_value_hook(obj: dict[str, Any]) -> Any:
    """``json.loads`` object hook: a crossing mark becomes a :class:`JsValue`, and a key of the
    hook's own that the node side escaped gets its name back."""
    if obj.keys() == _FIELDS and isinstance(obj[MARK], str) and isinstance(obj["text"], str):
        return JsValue(obj["text"], obj[MARK], bool(obj["truthy"]))
    if any(key.startswith(_ESCAPED) for key in obj):
        return {_unescaped(key): value for key, value in obj.items()}
    return obj


def is_js_string(value: object) -> TypeGuard[str]:
    """Whether JavaScript held ``value`` as a string: a :class:`JsValue` is a ``str`` on this
    side only to carry its text (a ``NaN`` id is not the id ``"NaN"``)."""
    return isinstance(value, str) and not isinstance(value, JsValue)


def _unescaped(key: str) -> str:
    tail = key[len(MARK) :]
    return key[:-1] if key.startswith(_ESCAPED) and tail == "~" * len(tail) else key
