"""The value hash of a resource read (spec/crux.md §5 and §8): SHA-256 of the value's canonical
JSON, where each leaf is written the way JavaScript's ``JSON.stringify`` writes it.

Objects have their keys sorted by UTF-16 code units and nothing between tokens. The leaves follow
``JSON.stringify``, so the domain is wider than RFC 8785's:

- a lone surrogate is written as its lowercase escape (``"\\ud800"``);
- NaN, the infinities and an integer too large for a double (``1e400`` and ``10**400`` in JSON
  text both read as Infinity there) are ``null``; every other integer is first rounded to the
  double JavaScript holds (``9007199254740993`` is ``9007199254740992``);
- a JavaScript ``Date`` (a :class:`~studio.core.json.js_values.JsValue` of kind ``Date``) is an
  object without own keys, ``{}``;
- a BigInt cannot be written, and the read fails (the reference then fails the callback); so
  does any value that is not JSON.

The walk keeps its own stack, so the depth it can hash is not bounded by Python's recursion.
"""

from __future__ import annotations

import hashlib
import math
import re
from decimal import Decimal
from typing import Any, Final

from studio.core.json.canonical import NotCanonicalizable
from studio.core.json.js_values import JsValue
from studio.core.json.values import MAX_SAFE_INTEGER

# A value nested deeper than this is refused where a sample or a check document declares it:
# the reference hashes by recursion, and Node's stack runs out a little past this depth.
HASHED_MAX_DEPTH: Final = 1_500

_ESCAPED: Final = re.compile('[\\x00-\\x1f"\\\\\\ud800-\\udfff]')
_SHORT_ESCAPES: Final = {
    "\b": "\\b",
    "\t": "\\t",
    "\n": "\\n",
    "\f": "\\f",
    "\r": "\\r",
    '"': '\\"',
    "\\": "\\\\",
}
_SURROGATE: Final = re.compile("[\\ud800-\\udfff]")


def stringify_json(value: Any) -> str:
    """The canonical text of ``value``; raises :class:`NotCanonicalizable` where the reference's
    ``JSON.stringify`` would throw (a BigInt) or for a value that is not JSON at all."""
    out: list[str] = []
    # Each item is a value to write, or a piece of text already decided.
    todo: list[tuple[bool, Any]] = [(False, value)]
    open_ids: set[int] = set()  # the containers on the path being written
    while todo:
        is_text, item = todo.pop()
        if is_text:
            if isinstance(item, int):
                open_ids.discard(item)  # leaving a container
            else:
                out.append(item)
            continue
        if isinstance(item, dict | list):
            if id(item) in open_ids:
                raise NotCanonicalizable("the value contains itself (a cycle)")
            open_ids.add(id(item))
            todo.append((True, id(item)))
            if isinstance(item, list):
                todo.append((True, "]"))
                for i in range(len(item) - 1, -1, -1):
                    todo.append((False, item[i]))
                    if i:
                        todo.append((True, ","))
                out.append("[")
            else:
                keys = list(item)
                for key in keys:
                    if not isinstance(key, str) or isinstance(key, JsValue):
                        raise NotCanonicalizable("an object key is not a string")
                keys.sort(key=_utf16_units)
                todo.append((True, "}"))
                for i in range(len(keys) - 1, -1, -1):
                    todo.append((False, item[keys[i]]))
                    todo.append((True, _string(keys[i]) + ":"))
                    if i:
                        todo.append((True, ","))
                out.append("{")
            continue
        out.append(_leaf(item))
    return "".join(out)


def value_hash(value: Any) -> str:
    """Lowercase hex SHA-256 of :func:`stringify_json` of ``value``, as UTF-8."""
    return hashlib.sha256(stringify_json(value).encode("utf-8")).hexdigest()


def js_number_text(value: float) -> str:
    """``Number.prototype.toString`` of a finite double: shortest digits, ECMAScript layout."""
    if value == 0:
        return "0"
    sign = "-" if value < 0 else ""
    digits_tuple, exponent = Decimal(repr(abs(value))).as_tuple()[1:]
    digits = "".join(map(str, digits_tuple)).rstrip("0")
    assert isinstance(exponent, int)  # a finite value
    exponent += len("".join(map(str, digits_tuple))) - len(digits)
    k = len(digits)
    n = exponent + k  # the value is 0.<digits> * 10**n
    if k <= n <= 21:
        return sign + digits + "0" * (n - k)
    if 0 < n <= 21:
        return sign + digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return sign + "0." + "0" * -n + digits
    e = n - 1
    mantissa = digits if k == 1 else digits[0] + "." + digits[1:]
    return f"{sign}{mantissa}e{'+' if e >= 0 else '-'}{abs(e)}"


def as_double(value: int | float) -> float | int | None:
    """The number JavaScript holds for a JSON number: an integer beyond 2**53 rounded to the
    nearest double (kept an ``int`` when it is whole), ``None`` for what is not finite there."""
    if isinstance(value, int) and not isinstance(value, bool):
        if -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER:
            return value
        try:
            return int(float(value))
        except OverflowError:
            return None
    return value if math.isfinite(value) else None


def _leaf(value: Any) -> str:
    if isinstance(value, JsValue):
        if value.kind == "Date":
            return "{}"
        if value.kind == "number":
            return "null"  # NaN or an infinity
        raise NotCanonicalizable(f"a JavaScript {value.kind} has no JSON form")
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, int | float):
        number = as_double(value)
        return "null" if number is None else js_number_text(float(number))
    raise NotCanonicalizable(f"a Python {type(value).__name__} is not JSON")


def _string(text: str) -> str:
    if _SURROGATE.search(text):
        # Two surrogates side by side are one character in JavaScript's UTF-16.
        text = text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")
    return '"' + _ESCAPED.sub(_escape, text) + '"'


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    return _SHORT_ESCAPES.get(char) or f"\\u{ord(char):04x}"


def _utf16_units(key: str) -> bytes:
    return key.encode("utf-16-be", "surrogatepass")
