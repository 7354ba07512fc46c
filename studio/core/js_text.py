"""String rules as the JavaScript reference runtimes apply them."""

from __future__ import annotations

import re

# ECMAScript WhiteSpace and LineTerminator: what String.prototype.trim removes. Python's
# str.strip differs (it strips U+001C..U+001F and U+0085, and keeps U+FEFF).
JS_WHITESPACE = (
    "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000\ufeff"
)
JS_NON_WHITESPACE_CLASS = "[^" + re.escape(JS_WHITESPACE) + "]"

_IDENTIFIER = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*")


def js_trim(text: str) -> str:
    return text.strip(JS_WHITESPACE)


def is_js_identifier(text: str) -> bool:
    """The function-name rule of a source reference: ``^[A-Za-z_$][A-Za-z0-9_$]*$``."""
    return _IDENTIFIER.fullmatch(text) is not None
