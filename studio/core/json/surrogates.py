"""Lone surrogates in JSON text.

A string read from JSON may hold a lone surrogate (``"\\ud800"`` is valid JSON, and JavaScript
strings are UTF-16), but UTF-8 cannot encode one: SQLite, a file or a pipe to Node would refuse
or mangle it. Kept as its escape, the text is valid JSON in UTF-8 that reads back as the same
string.
"""

from __future__ import annotations

import re

_LONE_SURROGATE = re.compile("[\\ud800-\\udfff]")


def escape_lone_surrogates(text: str) -> str:
    """``text`` with each lone surrogate written as its escape (``\\ud800``); inside JSON text a
    surrogate can only stand in a string, where the escape means the same code unit."""
    return _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
