"""ADF's time and sequence prefix, ``[YYYY-MM-DD HH:MM:SS UTC] [S<seq>] ``, which it puts before
a message's text when it sends the message (spec/provider-requests.md §2)."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

from studio.core.json.values import is_whole_number

_PREFIX = re.compile(r"\[(\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}) UTC\] (?:\[S(\d+)\] )?")
_FORMAT = "%Y-%m-%d %H:%M:%S"


def stamp(message: dict[str, Any], with_seq: bool) -> str:
    """The prefix for ``message`` (its ``created_at`` in epoch ms, and ``seq`` when
    ``with_seq``); empty when the message carries no usable ``created_at``."""
    created = message.get("created_at")
    if not is_whole_number(created):
        return ""
    try:
        when = datetime.fromtimestamp(created / 1000, UTC)
    except (OverflowError, OSError, ValueError):
        return ""
    text = f"[{when.strftime(_FORMAT)} UTC] "
    seq = message.get("seq")
    if with_seq and is_whole_number(seq):
        text += f"[S{int(seq)}] "
    return text


def split_stamp(text: str) -> tuple[str, int | None, int | None]:
    """``text`` without a leading prefix, with the time (epoch ms) and sequence it held."""
    match = _PREFIX.match(text)
    if match is None:
        return text, None, None
    when = datetime.strptime(match.group(1), _FORMAT).replace(tzinfo=UTC)
    seq = int(match.group(2)) if match.group(2) else None
    return text[match.end() :], int(when.timestamp() * 1000), seq
