"""``agent.json`` as the user wrote it, edited without losing anything (design.md: "Nothing the
user wrote is lost").

The studio edits one key of the agent config, ``pre_llm_hook``. Everything else in the file is
the user's: an edit splices new text into the original text at the hook's place, so every other
key keeps its bytes, its order, its escapes and the whitespace around it. Text the studio has to
write (a changed hook) follows the file's own formatting: its indentation (2 or 4 spaces, tabs or
one line), key separator, line endings and escaping of non-ASCII characters. Members of the hook
that did not change keep their original text too, so a round trip with the same hook gives back
identical bytes. Every edit is checked by parsing the result before it is returned.

Saving validates the draft first (an invalid draft never reaches the file) and never overwrites a
file it cannot read as a JSON object; the write itself is atomic. A file changed on disk since it
was loaded is not overwritten: the hook is merged into it as it is now (three ways, see
:mod:`~studio.core.workspace.hook_merge`), so an outside edit of any other key is kept, and a hook
changed outside and in the editor differently is written only when the user chose theirs or ours.
"""

from __future__ import annotations

import codecs
import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from studio.core.file_reads import read_file
from studio.core.findings import Finding, PathPart, dotted
from studio.core.json.deep import deep_json
from studio.core.json.files import JsonFileError, syntax_problem
from studio.core.json.same import same_json as _same
from studio.core.json.values import is_number, type_name
from studio.core.pre_llm.config import HOOK_KEY
from studio.core.pre_llm.targets import HookDraft, draft_from_config, draft_to_config
from studio.core.workspace.atomic_write import write_atomically
from studio.core.workspace.folder import AGENT_FILE, Workspace
from studio.core.workspace.hook_merge import ABSENT, HookMerge, MergeKind, hook_in, merge_hook

LIMITS_KEY = "limits"
DUPLICATE_KEY_RULE = "agent.duplicate_key"


class AgentDocumentError(JsonFileError):
    """``agent.json`` cannot be read as a JSON object. ``line`` and ``column`` (1-based) point at
    the problem when it has a place in the text."""

    def __init__(
        self, path: str | Path, problem: str, line: int | None = None, column: int | None = None
    ) -> None:
        where = f" at line {line}, column {column}" if line is not None else ""
        super().__init__(f"{path}: {problem}{where}")
        self.path = Path(path)
        self.problem = problem
        self.line = line
        self.column = column


@dataclass(frozen=True, slots=True)
class FileStamp:
    """What identifies one version of a file on disk, cheaply."""

    mtime_ns: int
    size: int
    inode: int

    @classmethod
    def of(cls, info: os.stat_result) -> FileStamp:
        return cls(info.st_mtime_ns, info.st_size, info.st_ino)


def _what_happened(loaded: FileStamp | None, current: FileStamp | None) -> str:
    if current is None:
        return "was deleted outside the studio since it was loaded"
    if loaded is None:
        return "was created outside the studio after it was found missing"
    return "was changed outside the studio since it was loaded"


class ExternalChange(Exception):
    """The file changed on disk after the studio loaded it; saving would overwrite that change."""

    def __init__(self, path: Path, loaded: FileStamp | None, current: FileStamp | None) -> None:
        super().__init__(
            f"{path.name} {_what_happened(loaded, current)}; reload it to see the change, or "
            "save with force to overwrite it"
        )
        self.path = path
        self.loaded = loaded
        self.current = current


class HookConflict(ExternalChange):
    """The hook was changed outside the studio and in the editor, differently: which one to keep
    is the user's choice (``merge.theirs`` or ``merge.ours``); nothing was written."""

    def __init__(
        self, path: Path, loaded: FileStamp | None, current: FileStamp | None, merge: HookMerge
    ) -> None:
        super().__init__(path, loaded, current)
        self.args = (
            f"{path.name} {_what_happened(loaded, current)} and its {HOOK_KEY} differs from the "
            "one being saved; keep yours or take theirs",
        )
        self.merge = merge


@dataclass(frozen=True)
class Formatting:
    """How the file is written, so that new text looks like the old.

    ``indent`` is the unit of indentation (``"  "``, ``"    "``, ``"\\t"``) or None for a file
    written on one line; ``key_separator`` is what stands between a key and its value (``": "``,
    ``":"``); ``item_separator`` what stands between members on one line (``", "``, ``","``);
    ``newline`` is ``"\\n"`` or ``"\\r\\n"``; ``ensure_ascii`` says that the file writes
    non-ASCII characters as ``\\uXXXX`` escapes; ``trailing`` is whatever follows the closing
    brace (usually ``"\\n"``)."""

    indent: str | None = "  "
    newline: str = "\n"
    key_separator: str = ": "
    item_separator: str = ","
    ensure_ascii: bool = False
    trailing: str = "\n"


NEW_FILE_FORMATTING = Formatting()


# ---------------------------------------------------------------------------------------------
# Where things are in the text


@dataclass(eq=False)
class _Object:
    start: int  # the "{"
    end: int = -1  # just after the "}"
    members: list[_Member] = field(default_factory=list)


@dataclass(eq=False)
class _Member:
    key: str
    key_start: int
    key_end: int
    value_start: int = -1
    value_end: int = -1
    value_object: _Object | None = None


@dataclass(eq=False)
class _Frame:
    kind: str  # "{" or "["
    path: tuple[PathPart, ...]
    record: _Object | None
    seen: dict[str, int] = field(default_factory=dict)
    member: _Member | None = None
    index: int = 0
    expect_key: bool = True


_STRING = r'"[^"\\]*(?:\\.[^"\\]*)*"'
_TOKEN = re.compile(_STRING + r'|[{}\[\]:,]|[^\s{}\[\]:,"]+')


def _line_col(text: str, pos: int) -> tuple[int, int]:
    line = text.count("\n", 0, pos) + 1
    return line, pos - (text.rfind("\n", 0, pos) + 1) + 1


def _scan(text: str) -> tuple[_Object, list[Finding]]:
    """The members of the top-level object and of the objects right under it, with their places,
    and a warning for every duplicate key at any depth. ``text`` is known to be a JSON object."""
    stack: list[_Frame] = []
    root: _Object | None = None
    duplicates: list[Finding] = []

    def value_done(end: int, obj: _Object | None) -> None:
        if not stack or stack[-1].kind != "{":
            return
        frame = stack[-1]
        member = frame.member
        assert member is not None
        member.value_end = end
        member.value_object = obj
        if frame.record is not None:
            frame.record.members.append(member)
        frame.member = None

    for match in _TOKEN.finditer(text):
        token, start, end = match.group(), match.start(), match.end()
        top = stack[-1] if stack else None
        first = token[0]
        if top is not None and top.kind == "{" and top.expect_key and first == '"':
            key = json.loads(token)
            top.member = _Member(key, start, end)
            top.expect_key = False
            if key in top.seen:
                duplicates.append(_duplicate_warning(text, (*top.path, key), start, top.seen[key]))
            else:
                top.seen[key] = start
            continue
        if first == ":":
            continue
        if first == ",":
            assert top is not None
            if top.kind == "{":
                top.expect_key = True
            else:
                top.index += 1
            continue
        if first in "}]":
            frame = stack.pop()
            if frame.record is not None:
                frame.record.end = end
            value_done(end, frame.record)
            continue
        if top is None:
            path: tuple[PathPart, ...] = ()
        elif top.kind == "{":
            assert top.member is not None
            top.member.value_start = start
            path = (*top.path, top.member.key)
        else:
            path = (*top.path, top.index)
        if first == "{":
            recorded = top is None or (len(stack) == 1 and top.kind == "{")
            obj = _Object(start) if recorded else None
            if top is None:
                root = obj
            stack.append(_Frame("{", path, obj))
        elif first == "[":
            stack.append(_Frame("[", path, None))
        else:
            value_done(end, None)
    assert root is not None
    return root, duplicates


def _duplicate_warning(text: str, path: tuple[PathPart, ...], at: int, first: int) -> Finding:
    line, _ = _line_col(text, at)
    first_line, _ = _line_col(text, first)
    key = path[-1]
    where = f" in {dotted(path[:-1])}" if len(path) > 1 else ""
    return Finding(
        path,
        f"key '{key}' appears more than once{where} (lines {first_line} and {line}); the runtime "
        "uses the last one and ignores the earlier",
        DUPLICATE_KEY_RULE,
        "warning",
    )


# ---------------------------------------------------------------------------------------------
# Reading


def _refuse_constant(name: str) -> Any:
    raise ValueError(name)


@dataclass(frozen=True, eq=False)
class _Parsed:
    text: str
    document: dict[str, Any]
    formatting: Formatting
    root: _Object | None  # None when the text is empty
    warnings: list[Finding]


def _parse(text: str, origin: Path) -> _Parsed:
    if not text.strip(" \t\n\r"):
        return _Parsed(text, {}, NEW_FILE_FORMATTING, None, [])
    try:
        with deep_json():  # the runtime reads configs nested a few thousand levels deep
            document = json.loads(text, parse_constant=_refuse_constant)
    except json.JSONDecodeError as exc:
        raise AgentDocumentError(
            origin, f"not JSON: {syntax_problem(exc)}", exc.lineno, exc.colno
        ) from None
    except ValueError as exc:  # NaN, Infinity or -Infinity, which JSON does not have
        line, column = _constant_place(text, str(exc))
        raise AgentDocumentError(
            origin, f"not JSON: {exc} is not a JSON value", line, column
        ) from None
    except RecursionError:
        raise AgentDocumentError(
            origin, "not JSON the studio can read: nested too deeply"
        ) from None
    if not isinstance(document, dict):
        start = len(text) - len(text.lstrip(" \t\n\r"))
        line, column = _line_col(text, start)
        raise AgentDocumentError(
            origin,
            f"an agent config must be a JSON object, got {type_name(document)}",
            line,
            column,
        )
    root, duplicates = _scan(text)
    return _Parsed(text, document, _formatting(text, root), root, duplicates)


def _constant_place(text: str, name: str) -> tuple[int | None, int | None]:
    for match in _TOKEN.finditer(text):
        if match.group() == name:
            return _line_col(text, match.start())
    return None, None


def _formatting(text: str, root: _Object) -> Formatting:
    newline = "\r\n" if "\r\n" in text else "\n"
    ensure_ascii = _escapes_non_ascii(text)
    trailing = text[root.end :]
    if not root.members:
        return replace(
            NEW_FILE_FORMATTING, newline=newline, ensure_ascii=ensure_ascii, trailing=trailing
        )
    first = root.members[0]
    opening = text[root.start + 1 : first.key_start]
    key_separator = text[first.key_end : first.value_start]
    indent = opening[opening.rfind("\n") + 1 :] if "\n" in opening else None
    if len(root.members) > 1:
        item_separator = text[first.value_end : root.members[1].key_start]
    else:
        item_separator = "," if key_separator == ":" else ", "
    if indent is not None:
        item_separator = ","
    return Formatting(indent, newline, key_separator, item_separator, ensure_ascii, trailing)


# ``\u0080`` and above, not preceded by an escaped backslash (``\\u00e9`` is text, not é).
_NON_ASCII_ESCAPE = re.compile(
    r"(?<!\\)(?:\\\\)*\\u(?:00[89a-fA-F]|0[1-9a-fA-F][0-9a-fA-F]|[1-9a-fA-F][0-9a-fA-F]{2})"
)


def _escapes_non_ascii(text: str) -> bool:
    """Whether the file writes non-ASCII characters as ``\\uXXXX`` (and never literally)."""
    return text.isascii() and _NON_ASCII_ESCAPE.search(text) is not None


# ---------------------------------------------------------------------------------------------
# Writing new text in the file's style


@dataclass(frozen=True)
class _Layout:
    """How the members of one object are laid out: ``opening`` + members joined by
    ``item_separator`` + ``closing``, inside the braces."""

    multiline: bool
    member_indent: str  # on multi-line objects, the whitespace before each key
    unit: str  # one level of indentation, for values that span lines
    key_separator: str
    item_separator: str  # between two members: ",\n    " or ", " or ","
    opening: str
    closing: str
    ensure_ascii: bool
    newline: str

    def at(self, indent: str) -> _Layout:
        """The same layout for members indented by ``indent``."""
        if not self.multiline:
            return self
        return replace(
            self,
            member_indent=indent,
            item_separator="," + self.newline + indent,
            opening=self.newline + indent,
        )


def _line_indent(text: str, pos: int) -> str:
    start = text.rfind("\n", 0, pos) + 1
    line = text[start:pos]
    return line[: len(line) - len(line.lstrip(" \t"))]


def _starts_line(text: str, pos: int) -> bool:
    return not text[text.rfind("\n", 0, pos) + 1 : pos].strip(" \t")


def _layout(text: str, obj: _Object, fmt: Formatting) -> _Layout:
    """The layout of a non-empty object, read from the object itself."""
    first, last = obj.members[0], obj.members[-1]
    opening = text[obj.start + 1 : first.key_start]
    closing = text[last.value_end : obj.end - 1]
    key_separator = text[first.key_end : first.value_start]
    if len(obj.members) > 1:
        item_separator = text[first.value_end : obj.members[1].key_start]
    else:
        item_separator = fmt.item_separator if fmt.indent is None else ", "
    if "\n" not in opening:
        return _Layout(
            False,
            "",
            fmt.indent or "  ",
            key_separator,
            item_separator,
            opening,
            closing,
            fmt.ensure_ascii,
            fmt.newline,
        )
    indent = opening[opening.rfind("\n") + 1 :]
    parent_indent = _line_indent(text, obj.start)
    if fmt.indent is not None:
        unit = fmt.indent
    elif indent.startswith(parent_indent) and len(indent) > len(parent_indent):
        unit = indent[len(parent_indent) :]
    else:
        unit = "  "
    if "\n" in closing:
        closing = fmt.newline + closing[closing.rfind("\n") + 1 :]
    return _Layout(
        True,
        indent,
        unit,
        key_separator,
        "," + fmt.newline + indent,
        fmt.newline + indent,
        closing,
        fmt.ensure_ascii,
        fmt.newline,
    )


def _new_layout(fmt: Formatting, parent_indent: str) -> _Layout:
    """The layout for an object that has no members yet."""
    if fmt.indent is None:
        return _Layout(
            False,
            "",
            "  ",
            fmt.key_separator,
            fmt.item_separator,
            "",
            "",
            fmt.ensure_ascii,
            fmt.newline,
        )
    indent = parent_indent + fmt.indent
    return _Layout(
        True,
        indent,
        fmt.indent,
        fmt.key_separator,
        "," + fmt.newline + indent,
        fmt.newline + indent,
        fmt.newline + parent_indent,
        fmt.ensure_ascii,
        fmt.newline,
    )


def _dumps(value: Any, ensure_ascii: bool, **options: Any) -> str:
    text = json.dumps(value, ensure_ascii=ensure_ascii, allow_nan=False, **options)
    if not ensure_ascii:
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate, which only an escape can write
            text = json.dumps(value, ensure_ascii=True, allow_nan=False, **options)
    return text


def _value_text(value: Any, layout: _Layout) -> str:
    """A value as a member of an object with ``layout``."""
    if not layout.multiline:
        spaced = layout.item_separator.rstrip(" \t\r\n") != layout.item_separator
        separators = (", " if spaced else ",", layout.key_separator)
        return _dumps(value, layout.ensure_ascii, separators=separators)
    text = _dumps(
        value, layout.ensure_ascii, indent=layout.unit, separators=(",", layout.key_separator)
    )
    return text.replace("\n", layout.newline + layout.member_indent)


def _object_text(members: list[tuple[str, str]], layout: _Layout) -> str:
    """An object from (key text, value text) pairs."""
    if not members:
        return "{}"
    body = layout.item_separator.join(key + layout.key_separator + value for key, value in members)
    return "{" + layout.opening + body + layout.closing + "}"


_Edit = tuple[int, int, str]


def _apply(text: str, edits: list[_Edit]) -> str:
    for start, end, replacement in sorted(edits, reverse=True):
        text = text[:start] + replacement + text[end:]
    return text


# ---------------------------------------------------------------------------------------------
# The document


def _stamp(path: Path) -> FileStamp | None:
    try:
        return FileStamp.of(os.stat(path))
    except FileNotFoundError:
        return None


@dataclass(frozen=True, eq=False)
class _Disk:
    data: bytes | None  # None: no file
    stamp: FileStamp | None


def _read_disk(path: Path) -> _Disk:
    try:
        data, info = read_file(path)
    except FileNotFoundError:
        return _Disk(None, None)
    except IsADirectoryError:
        raise AgentDocumentError(path, "is a folder, not a file") from None
    except OSError as exc:
        raise AgentDocumentError(path, f"cannot be read ({exc.strerror or exc})") from None
    return _Disk(data, FileStamp.of(info))


def _read_config(path: Path) -> tuple[_Disk, _Parsed, bool]:
    """The file's bytes, its parsed text and whether it had a byte order mark; an empty config
    when there is no file."""
    disk = _read_disk(path)
    if disk.data is None:
        return disk, _Parsed("", {}, NEW_FILE_FORMATTING, None, []), False
    text, bom = _decode(disk.data, path)
    return disk, _parse(text, path), bom


def _decode(data: bytes, path: Path) -> tuple[str, bool]:
    bom = data.startswith(codecs.BOM_UTF8)
    body = data[len(codecs.BOM_UTF8) :] if bom else data
    try:
        return body.decode("utf-8"), bom
    except UnicodeDecodeError as exc:
        line = body.count(b"\n", 0, exc.start) + 1
        column = exc.start - (body.rfind(b"\n", 0, exc.start) + 1) + 1
        raise AgentDocumentError(
            path, f"not UTF-8 text (byte 0x{body[exc.start]:02x} cannot be decoded)", line, column
        ) from None


class AgentDocument:
    """One agent config file, loaded, with its original text and the version on disk it came from.

    ``load`` raises :class:`AgentDocumentError` for a file that is not a readable JSON object, so
    no document (and no save) exists for it. A missing file loads as an empty config; saving a
    hook then creates the file with just the hook.
    """

    def __init__(self, path: Path, disk: _Disk, parsed: _Parsed, bom: bool) -> None:
        self.path = path
        self._disk = disk
        self._parsed = parsed
        self._bom = bom

    # -- loading ---------------------------------------------------------------------------

    @classmethod
    def load(cls, path: str | Path) -> AgentDocument:
        path = Path(path)
        disk, parsed, bom = _read_config(path)
        return cls(path, disk, parsed, bom)

    @classmethod
    def for_workspace(cls, workspace: Workspace | str | Path) -> AgentDocument:
        root = workspace.root if isinstance(workspace, Workspace) else Path(workspace)
        return cls.load(root / AGENT_FILE)

    @classmethod
    def from_text(cls, text: str, origin: Path) -> AgentDocument:
        """A document over config text that is not a file of its own (an ``.adf``'s
        ``config_json``); ``origin`` names it in errors. Only its text edits apply: it has no
        version on disk to save to."""
        return cls(origin, _Disk(text.encode("utf-8"), None), _parse(text, origin), False)

    def reload(self) -> None:
        """Read the file again. When it cannot be read, this raises and the document keeps what
        it had; a later save then sees the change and will not overwrite the unreadable file."""
        disk, parsed, bom = _read_config(self.path)
        self._disk, self._parsed, self._bom = disk, parsed, bom

    # -- what was loaded -------------------------------------------------------------------

    @property
    def exists(self) -> bool:
        return self._disk.data is not None

    @property
    def stamp(self) -> FileStamp | None:
        """The file's version at load (None when there was no file)."""
        return self._disk.stamp

    @property
    def text(self) -> str:
        """The file's text as loaded (without a byte order mark); empty when there is no file."""
        return self._parsed.text

    @property
    def document(self) -> dict[str, Any]:
        """The parsed config, keys in file order; a duplicate key holds its last value."""
        return self._parsed.document

    @property
    def formatting(self) -> Formatting:
        return self._parsed.formatting

    @property
    def warnings(self) -> list[Finding]:
        """Duplicate keys, each with its JSON path."""
        return list(self._parsed.warnings)

    @property
    def hook_config(self) -> Any:
        """The ``pre_llm_hook`` value as written, or None when the key is absent."""
        return self.document.get(HOOK_KEY)

    @property
    def has_hook(self) -> bool:
        """Whether there is a hook, as the runtime sees it: absent or falsy means none."""
        value = self.document.get(HOOK_KEY)
        if value is None or value is False or value == "":
            return False
        return not (is_number(value) and (value == 0 or value != value))

    def hook_draft(self) -> HookDraft:
        """The draft for the current hook, or a new hook's draft (one row, Main) when none."""
        value = self.document.get(HOOK_KEY)
        if isinstance(value, dict):
            return draft_from_config(value)
        return HookDraft()

    # -- new text --------------------------------------------------------------------------

    def with_hook(self, config: Mapping[str, Any]) -> str:
        """The file's text with ``pre_llm_hook`` set to ``config``, everything else as it is.

        An existing key keeps its place; a new one goes after ``limits``, else at the end."""
        config = dict(config)
        parsed = self._parsed
        if parsed.root is None:
            new_text = _fresh_text(config)
            _check(new_text, parsed.document, config)
            return new_text
        if HOOK_KEY in parsed.document and _same(parsed.document[HOOK_KEY], config):
            return parsed.text
        text, root, fmt = parsed.text, parsed.root, parsed.formatting
        hooks = [m for m in root.members if m.key == HOOK_KEY]
        if hooks:
            member = hooks[-1]  # the one the runtime reads
            value = _hook_value_text(text, member, parsed.document[HOOK_KEY], config, root, fmt)
            new_text = _apply(text, [(member.value_start, member.value_end, value)])
        elif not root.members:
            layout = _new_layout(fmt, "")
            value = _value_text(config, layout)
            body = _object_text([(_key_text(HOOK_KEY, fmt), value)], layout)
            new_text = text[: root.start] + body + text[root.end :]
        else:
            anchors = [m for m in root.members if m.key == LIMITS_KEY] or root.members
            anchor = anchors[-1]
            layout = _member_layout(text, anchor, _layout(text, root, fmt))
            addition = (
                layout.item_separator
                + _key_text(HOOK_KEY, fmt)
                + layout.key_separator
                + _value_text(config, layout)
            )
            new_text = _apply(text, [(anchor.value_end, anchor.value_end, addition)])
        _check(new_text, parsed.document, config)
        return new_text

    def without_hook(self) -> str:
        """The file's text without ``pre_llm_hook`` (every occurrence, so that an earlier
        duplicate does not come back to life), everything else as it is."""
        parsed = self._parsed
        root = parsed.root
        if root is None or HOOK_KEY not in parsed.document:
            return parsed.text
        members = root.members
        gone = [i for i, m in enumerate(members) if m.key == HOOK_KEY]
        edits: list[_Edit] = []
        if len(gone) == len(members):
            edits.append((root.start + 1, root.end - 1, ""))
        else:
            first_kept = next(i for i, m in enumerate(members) if m.key != HOOK_KEY)
            for i in gone:
                if i < first_kept:  # take the member and the separator after it
                    edits.append((members[i].key_start, members[i + 1].key_start, ""))
                else:  # take the separator before it and the member
                    edits.append((members[i - 1].value_end, members[i].value_end, ""))
        new_text = _apply(parsed.text, edits)
        _check(new_text, parsed.document, None)
        return new_text

    # -- saving ----------------------------------------------------------------------------

    def changed_on_disk(self) -> bool:
        """Whether the file on disk is no longer the version loaded: another stamp, other bytes,
        created or deleted."""
        current = _read_disk(self.path)
        return current.stamp != self._disk.stamp or current.data != self._disk.data

    def save(self, draft: HookDraft, *, force: bool = False) -> str:
        """Validate ``draft`` and write it as the file's ``pre_llm_hook``; returns the new text.

        When the file changed on disk since it was loaded, the hook is merged into the file as it
        is now: an edit of another key there is kept; a hook changed there and not here is kept
        too (nothing is written and the document becomes that version).

        Raises ``DraftInvalid`` (nothing is written), :class:`HookConflict` when the hook was
        changed on disk too, differently, and ``force`` (keep ours) is not set, and
        :class:`AgentDocumentError` when the file on disk cannot be read as a JSON object (never
        overwritten, even with force)."""
        return self.save_config(draft_to_config(draft), force=force)

    def save_config(self, config: Mapping[str, Any], *, force: bool = False) -> str:
        """Write ``config`` (already validated) as ``pre_llm_hook``, under the rules of
        :meth:`save`; the one path by which every hook edit of a workspace is saved."""
        return self._save_hook(dict(config), force)

    def remove_hook(self, *, force: bool = False) -> str:
        """Delete ``pre_llm_hook`` from the file, under the same rules as :meth:`save`."""
        if HOOK_KEY not in self.document:
            return self.text
        return self._save_hook(ABSENT, force)

    def text_with(self, hook: Any) -> str:
        """The text with ``hook`` as ``pre_llm_hook`` (:data:`ABSENT`: without one)."""
        return self.without_hook() if hook is ABSENT else self.with_hook(hook)

    def merged_text(self, base: Any, ours: Any) -> tuple[HookMerge, str | None]:
        """This document as the version on disk now (*theirs*): the merge of its hook with
        ``base`` (the hook loaded before) and ``ours`` (the hook to save), and its text with the
        merged hook, every other key as this text has it; None in place of the text when both
        sides changed the hook differently."""
        merge = merge_hook(base, ours, hook_in(self.document))
        if merge.conflict:
            return merge, None
        if merge.kind is MergeKind.OURS:
            return merge, self.text_with(ours)
        return merge, self.text

    def _save_hook(self, hook: Any, force: bool) -> str:
        current = _read_disk(self.path)
        if current.stamp == self._disk.stamp and current.data == self._disk.data:
            text, bom = self.text_with(hook), self._bom
            if current.data is not None and text == self.text:
                return text
        else:
            # Changed outside: the hook is merged into the file as it is now, so that an outside
            # edit of any other key is kept.
            theirs = AgentDocument._on_disk(self.path, current)
            merge, merged = theirs.merged_text(hook_in(self.document), hook)
            if merged is None:
                if not force:
                    raise HookConflict(self.path, self._disk.stamp, current.stamp, merge)
                merged = theirs.text_with(hook)
            text, bom = merged, theirs._bom
            if current.data is not None and text == theirs.text:
                self._disk, self._parsed, self._bom = current, theirs._parsed, theirs._bom
                return text
        data = (codecs.BOM_UTF8 if bom else b"") + text.encode("utf-8")
        write_atomically(self.path, data)
        self._disk = _Disk(data, _stamp(self.path))
        self._parsed = _parse(text, self.path)
        self._bom = bom
        return text

    @classmethod
    def _on_disk(cls, path: Path, disk: _Disk) -> AgentDocument:
        """The document over what was just read from disk. Only a file the studio can read is
        ever replaced: what it holds would otherwise be lost without the user having seen it."""
        if disk.data is None:
            return cls(path, disk, _Parsed("", {}, NEW_FILE_FORMATTING, None, []), False)
        try:
            text, bom = _decode(disk.data, path)
            return cls(path, disk, _parse(text, path), bom)
        except AgentDocumentError as exc:
            raise AgentDocumentError(
                path,
                f"{exc.problem}; the studio does not overwrite a file it cannot read, fix or "
                "move it",
                exc.line,
                exc.column,
            ) from None


def _key_text(key: str, fmt: Formatting) -> str:
    return _dumps(key, fmt.ensure_ascii)


def _fresh_text(config: dict[str, Any]) -> str:
    """A new file holding only the hook."""
    fmt = NEW_FILE_FORMATTING
    layout = _new_layout(fmt, "")
    body = _object_text([(_key_text(HOOK_KEY, fmt), _value_text(config, layout))], layout)
    return body + fmt.trailing


def _member_layout(text: str, member: _Member, layout: _Layout) -> _Layout:
    """``layout`` at ``member``'s own indentation, when its key starts a line (keys of one
    object are not always aligned)."""
    if layout.multiline and _starts_line(text, member.key_start):
        return layout.at(_line_indent(text, member.key_start))
    return layout


def _hook_value_text(
    text: str, member: _Member, old: Any, new: dict[str, Any], root: _Object, fmt: Formatting
) -> str:
    """The hook's new value text. When the old value is an object with members, the new one is
    written in its layout and every member whose value did not change keeps its original text."""
    obj = member.value_object
    if obj is None or not obj.members or not isinstance(old, dict):
        return _value_text(new, _member_layout(text, member, _layout(text, root, fmt)))
    layout = _layout(text, obj, fmt)
    originals = {m.key: m for m in obj.members}  # the last of duplicates, as parsed
    pairs: list[tuple[str, str]] = []
    for key, value in new.items():
        kept = originals.get(key)
        key_text = text[kept.key_start : kept.key_end] if kept else _key_text(key, fmt)
        if kept is not None and key in old and _same(old[key], value):
            value_text = text[kept.value_start : kept.value_end]
        else:
            value_text = _value_text(value, layout)
        pairs.append((key_text, value_text))
    return _object_text(pairs, layout)


class _EditBroken(AssertionError):
    """An edit changed something it should not have; nothing is written."""


def _check(new_text: str, before: dict[str, Any], hook: dict[str, Any] | None) -> None:
    """The new text parses to ``before`` with only the hook changed, key order included."""
    with deep_json():  # parsing and comparing recurse once per level
        after = json.loads(new_text, parse_constant=_refuse_constant)
        others_before = {k: v for k, v in before.items() if k != HOOK_KEY}
        others_after = {k: v for k, v in after.items() if k != HOOK_KEY}
        hook_ok = HOOK_KEY not in after if hook is None else _same(after.get(HOOK_KEY), hook)
        same = hook_ok and _same(others_before, others_after)
    if not same:
        raise _EditBroken("editing agent.json would change more than pre_llm_hook")


METADATA_KEY = "metadata"
UPDATED_AT_KEY = "updated_at"


def with_metadata_stamp(text: str, stamp: str, origin: Path) -> str:
    """``text`` with ``metadata.updated_at`` set to ``stamp``, every other byte as it is (an
    agent config that ADF stamps on each save). A config without a ``metadata`` object is
    returned unchanged: the studio adds no keys the runtime did not write."""
    parsed = _parse(text, origin)
    root = parsed.root
    metas = [m for m in root.members if m.key == METADATA_KEY] if root else []
    if not metas or metas[-1].value_object is None:
        return text
    obj = metas[-1].value_object
    fmt = parsed.formatting
    value = _dumps(stamp, fmt.ensure_ascii)
    stamps = [m for m in obj.members if m.key == UPDATED_AT_KEY]
    if stamps:
        edit: _Edit = (stamps[-1].value_start, stamps[-1].value_end, value)
    elif not obj.members:
        layout = _new_layout(fmt, _line_indent(text, metas[-1].key_start))
        edit = (obj.start, obj.end, _object_text([(_key_text(UPDATED_AT_KEY, fmt), value)], layout))
    else:
        last = obj.members[-1]
        layout = _member_layout(text, last, _layout(text, obj, fmt))
        addition = (
            layout.item_separator + _key_text(UPDATED_AT_KEY, fmt) + layout.key_separator + value
        )
        edit = (last.value_end, last.value_end, addition)
    new_text = _apply(text, [edit])
    before = parsed.document
    expected = {
        k: ({**v, UPDATED_AT_KEY: stamp} if k == METADATA_KEY else v) for k, v in before.items()
    }
    with deep_json():  # parsing and comparing recurse once per level
        same = _same(json.loads(new_text), expected)
    if not same:
        raise _EditBroken("stamping metadata.updated_at would change more than that key")
    return new_text
