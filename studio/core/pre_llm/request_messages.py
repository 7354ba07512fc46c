"""Rules 3, 4 and 5 of a returned pre-LLM request: the messages, their content blocks and the
pairing of each ``tool_use`` with a later ``tool_result``.

Messages and blocks are checked in document order, each block by the checker of its type; a
block's checker reports in the order the runtime meets the block's fields, so the first error
stays the one the runtime fails the call on. Pairing findings are kept apart (``Check.pairing``):
the runtime reports them only once every block has passed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from studio.core.findings import Finding
from studio.core.pre_llm.request_check import (
    MISSING,
    RULE_BLOCKS,
    RULE_MESSAGES,
    RULE_PAIRING,
    Add,
    Check,
    Path,
    article,
    got,
    loc,
    scan,
    shape,
)

BLOCK_TYPES = (
    "text",
    "thinking",
    "tool_use",
    "tool_result",
    "image_url",
    "input_audio",
    "video_url",
)

_BLOCK_KEYS = {
    "text": frozenset({"type", "text"}),
    "thinking": frozenset({"type", "thinking"}),
    "tool_use": frozenset({"type", "id", "name", "input"}),
    "tool_result": frozenset({"type", "tool_use_id", "content", "is_error"}),
    "image_url": frozenset({"type", "image_url"}),
    "input_audio": frozenset({"type", "input_audio"}),
    "video_url": frozenset({"type", "video_url"}),
}
_TYPE_ONLY = frozenset({"type"})
_MESSAGE_KEYS = frozenset({"role", "content"})
_MEDIA_FIELDS = {
    "image_url": ("url",),
    "input_audio": ("data", "format"),
    "video_url": ("url",),
}


class _Pairing:
    """The tool_use ids met so far: those still waiting for a tool_result, and those answered."""

    __slots__ = ("answered", "outstanding")

    def __init__(self) -> None:
        self.outstanding: dict[str, tuple[int, int]] = {}
        self.answered: dict[str, tuple[int, int]] = {}


def check_messages(check: Check, req: dict[Any, Any], messages: list[Any]) -> None:
    add = check.add
    pairing = _Pairing()
    block_checks = _BLOCK_CHECKS
    for i, msg in enumerate(messages):
        if type(msg) is not dict:
            shape(
                check,
                ("messages", i),
                msg,
                "must be an object with role and content",
                RULE_MESSAGES,
                req,
                messages,
            )
            continue
        role = msg.get("role", MISSING)
        content = msg.get("content", MISSING)
        known = (role is not MISSING) + (content is not MISSING)
        if type(role) is not str or (role != "user" and role != "assistant"):
            shape(
                check,
                ("messages", i, "role"),
                role,
                'must be "user" or "assistant"',
                RULE_MESSAGES,
                req,
                messages,
                msg,
            )
            role = None
        tc = type(content)
        if tc is list:
            for j, block in enumerate(content):
                if type(block) is not dict:
                    shape(
                        check,
                        ("messages", i, "content", j),
                        block,
                        "must be a content block (an object with a string type)",
                        RULE_BLOCKS,
                        req,
                        messages,
                        msg,
                        content,
                    )
                    continue
                btype = block.get("type", MISSING)
                # Most blocks are plain text blocks with nothing else in them: no call for those.
                if btype == "text" and len(block) == 2 and type(block.get("text")) is str:
                    continue
                ancestors = (req, messages, msg, content, block)
                checker = block_checks.get(btype) if type(btype) is str else None
                if checker is None:
                    _unknown_type(check, ancestors, i, j, block, btype)
                    continue
                n = checker(check, pairing, ancestors, i, j, block, btype, role)
                if len(block) > n:
                    check.extras(
                        add, ("messages", i, "content", j), block, _BLOCK_KEYS[btype], ancestors
                    )
        elif tc is not str:
            shape(
                check,
                ("messages", i, "content"),
                content,
                "must be a string or an array of content blocks",
                RULE_MESSAGES,
                req,
                messages,
                msg,
            )
        if len(msg) > known:
            check.extras(add, ("messages", i), msg, _MESSAGE_KEYS, (req, messages, msg))

    for use_id, (i, j) in pairing.outstanding.items():
        path = ("messages", i, "content", j)
        check.pairing.append(
            Finding(
                path,
                f"{loc(path)}: tool_use '{use_id}' is never answered by a later tool_result",
                RULE_PAIRING,
            )
        )


def _unknown_type(
    check: Check, ancestors: tuple[object, ...], i: int, j: int, block: dict[Any, Any], btype: Any
) -> None:
    """A block whose type is not a string, or names no block type the runtime knows."""
    add = check.add
    path = ("messages", i, "content", j, "type")
    if type(btype) is not str:
        shape(
            check,
            path,
            btype,
            "must be a string naming the block type",
            RULE_BLOCKS,
            *ancestors,
        )
    else:
        add(
            Finding(
                path,
                f"{loc(path)} {got(btype)} is not a supported block type "
                f"(one of {', '.join(BLOCK_TYPES)})",
                RULE_BLOCKS,
            )
        )
    check.extras(add, path[:-1], block, _TYPE_ONLY, ancestors)


# Each checker returns how many of its block's own keys are present (``type`` included), so that
# a block holding only those keys needs no walk for extra keys.
_BlockCheck = Callable[
    [Check, _Pairing, tuple[object, ...], int, int, dict[Any, Any], str, str | None], int
]


def _text_block(
    check: Check,
    pairing: _Pairing,
    ancestors: tuple[object, ...],
    i: int,
    j: int,
    block: dict[Any, Any],
    btype: str,
    role: str | None,
) -> int:
    text = block.get("text", MISSING)
    if type(text) is str:
        return 2
    return 1 + _field(check, ancestors, i, j, "text", text, "text must be a string")


def _tool_use_block(
    check: Check,
    pairing: _Pairing,
    ancestors: tuple[object, ...],
    i: int,
    j: int,
    block: dict[Any, Any],
    btype: str,
    role: str | None,
) -> int:
    add = check.add
    if role == "user":
        _misplaced(add, i, j, "a tool_use must be in an assistant message", role)
    n = 1
    use_id = block.get("id", MISSING)
    name = block.get("name", MISSING)
    if type(use_id) is str and use_id:
        n += 1
        outstanding, answered = pairing.outstanding, pairing.answered
        if use_id in outstanding or use_id in answered:
            first = outstanding.get(use_id) or answered[use_id]
            path = ("messages", i, "content", j)
            where = loc(("messages", first[0], "content", first[1]))
            check.pairing.append(
                Finding(
                    path,
                    f"{loc(path)}: tool_use id '{use_id}' is used twice (first at {where})",
                    RULE_PAIRING,
                )
            )
            if use_id in answered:
                outstanding[use_id] = (i, j)
                del answered[use_id]
        else:
            outstanding[use_id] = (i, j)
    else:
        n += _field(check, ancestors, i, j, "id", use_id, "tool_use id must be a non-empty string")
    if type(name) is str and name:
        n += 1
    else:
        n += _field(
            check, ancestors, i, j, "name", name, "tool_use name must be a non-empty string"
        )
    tool_input = block.get("input", MISSING)
    if tool_input is not MISSING:
        n += 1
        if type(tool_input) is not str:
            problems = scan(tool_input, ancestors, check.clean)
            if problems:
                check.problems(add, ("messages", i, "content", j, "input"), problems)
    return n


def _tool_result_block(
    check: Check,
    pairing: _Pairing,
    ancestors: tuple[object, ...],
    i: int,
    j: int,
    block: dict[Any, Any],
    btype: str,
    role: str | None,
) -> int:
    if role == "assistant":
        _misplaced(check.add, i, j, "a tool_result must be in a user message", role)
    n = 1
    use_id = block.get("tool_use_id", MISSING)
    result = block.get("content", MISSING)
    is_error = block.get("is_error", MISSING)
    if type(use_id) is str and use_id:
        n += 1
        where_from = pairing.outstanding.pop(use_id, None)
        if where_from is None:
            path = ("messages", i, "content", j)
            check.pairing.append(
                Finding(
                    path,
                    f"{loc(path)}: tool_result '{use_id}' does not answer an "
                    "earlier unmatched tool_use",
                    RULE_PAIRING,
                )
            )
        else:
            pairing.answered[use_id] = where_from
    else:
        n += _field(
            check,
            ancestors,
            i,
            j,
            "tool_use_id",
            use_id,
            "tool_result tool_use_id must be a non-empty string",
        )
    if type(result) is str:
        n += 1
    else:
        n += _field(
            check, ancestors, i, j, "content", result, "tool_result content must be a string"
        )
    if is_error is not MISSING:
        if type(is_error) is bool:
            n += 1
        else:
            n += _field(
                check,
                ancestors,
                i,
                j,
                "is_error",
                is_error,
                "tool_result is_error must be a boolean when present",
            )
    return n


def _thinking_block(
    check: Check,
    pairing: _Pairing,
    ancestors: tuple[object, ...],
    i: int,
    j: int,
    block: dict[Any, Any],
    btype: str,
    role: str | None,
) -> int:
    if role == "user":
        _misplaced(check.add, i, j, "a thinking block must be in an assistant message", role)
    thought = block.get("thinking", MISSING)
    if type(thought) is str:
        return 2
    return 1 + _field(check, ancestors, i, j, "thinking", thought, "thinking must be a string")


def _media_block(
    check: Check,
    pairing: _Pairing,
    ancestors: tuple[object, ...],
    i: int,
    j: int,
    block: dict[Any, Any],
    btype: str,
    role: str | None,
) -> int:
    """``image_url.url``, ``input_audio.data``/``.format``, ``video_url.url``: user blocks
    holding a small object."""
    if role == "assistant":
        _misplaced(
            check.add, i, j, f"{article(btype)} {btype} block must be in a user message", role
        )
    fields = _MEDIA_FIELDS[btype]
    inner = block.get(btype, MISSING)
    path: Path = ("messages", i, "content", j, btype)
    if type(inner) is not dict:
        wanted = " and ".join(f"a string {f}" for f in fields)
        shape(check, path, inner, f"must be an object with {wanted}", RULE_BLOCKS, *ancestors)
        return 1 if inner is MISSING else 2
    present = 0
    for f in fields:
        v = inner.get(f, MISSING)
        if v is not MISSING:
            present += 1
        if type(v) is not str:
            shape(check, (*path, f), v, "must be a string", RULE_BLOCKS, *ancestors, inner)
    if len(inner) > present:
        check.extras(check.add, path, inner, frozenset(fields), (*ancestors, inner))
    return 2


_BLOCK_CHECKS: dict[str, _BlockCheck] = {
    "text": _text_block,
    "thinking": _thinking_block,
    "tool_use": _tool_use_block,
    "tool_result": _tool_result_block,
    "image_url": _media_block,
    "input_audio": _media_block,
    "video_url": _media_block,
}


def _field(
    check: Check,
    ancestors: tuple[object, ...],
    i: int,
    j: int,
    key: str,
    value: object,
    wanted: str,
) -> int:
    """A block field of the wrong shape; returns 1 when the key is present (for the key count)."""
    path = ("messages", i, "content", j, key)
    if value is MISSING:
        check.add(Finding(path, f"{loc(path)} is missing: {wanted}", RULE_BLOCKS))
        return 0
    check.add(Finding(path, f"{loc(path)}: {wanted}, got {got(value)}", RULE_BLOCKS))
    check.json(check.add, path, value, ancestors, keep_self=False)
    return 1


def _misplaced(add: Add, i: int, j: int, rule_text: str, role: str | None) -> None:
    path = ("messages", i, "content", j)
    add(
        Finding(
            path,
            f'{loc(path)}: {rule_text} (this message\'s role is "{role}")',
            RULE_BLOCKS,
        )
    )
