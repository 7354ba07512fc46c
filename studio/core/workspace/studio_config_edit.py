"""``hookstudio.json``'s hook sections (``step``, ``invocation``, ``chain``), edited without
losing anything else.

The studio's own settings file holds keys the editors do not know (``loops``, ``env``,
``limits``, an ``.adf``'s ``adf`` section, keys of a later version). A section edit splices new
text into the file's text at that section's place, in the file's own style, with the machinery
that edits ``agent.json`` (:mod:`studio.core.workspace.agent_document`): every other key keeps its
bytes, its order and its whitespace, and members of the section that did not change keep their
text too. Every edit is checked by parsing the result before it is written.

Saving validates the section first (a value with an error is never written), reads the file
again and splices into what is on disk now, so an outside edit to another key is kept; an
outside edit to the same section is not overwritten unless the caller forces it. The write is
atomic.
"""

from __future__ import annotations

import codecs
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from studio.core.chain.config import CHAIN_SECTION, validate_chain_config
from studio.core.findings import Finding, errors
from studio.core.json.deep import deep_json
from studio.core.json.same import same_json as _same
from studio.core.step.settings import parse_step_settings
from studio.core.workspace.agent_document import (
    NEW_FILE_FORMATTING,
    AgentDocumentError,
    _apply,
    _Disk,
    _Edit,
    _hook_value_text,
    _key_text,
    _layout,
    _member_layout,
    _new_layout,
    _object_text,
    _Parsed,
    _read_config,
    _read_disk,
    _value_text,
)
from studio.core.workspace.atomic_write import write_atomically

# No such key in the file (unlike ``null``, which is a value); the one a merge knows too.
from studio.core.workspace.hook_merge import ABSENT as ABSENT

STEP_SECTION: Final = "step"
INVOCATION_SECTION: Final = "invocation"
SECTIONS: Final = (STEP_SECTION, INVOCATION_SECTION, CHAIN_SECTION)


class StudioConfigError(Exception):
    """``hookstudio.json`` cannot be read as a JSON object; nothing is written over it."""

    def __init__(self, path: Path, problem: str) -> None:
        super().__init__(f"{path.name}: {problem}")
        self.path = path
        self.problem = problem


class SectionChangedOutside(Exception):
    """The section on disk is no longer the one the editor started from."""

    def __init__(self, key: str, theirs: Any) -> None:
        super().__init__(
            f"{key} in hookstudio.json was changed outside the studio since it was opened"
        )
        self.key = key
        self.theirs = theirs


class SectionInvalid(ValueError):
    """A section value with errors: it is not written."""

    def __init__(self, findings: list[Finding]) -> None:
        super().__init__("; ".join(f.message for f in findings))
        self.findings = findings


def section_findings(key: str, value: Any) -> list[Finding]:
    """Every finding on a section value (``ABSENT``: no section, which is valid), paths from the
    file's root."""
    if value is ABSENT or value is None:
        return []
    if key in (STEP_SECTION, INVOCATION_SECTION):
        # Both name one hook by its source, under the same rules.
        parsed = parse_step_settings(value)
        return [f.under((key,)) for f in parsed] if isinstance(parsed, list) else []
    if key == CHAIN_SECTION:
        return validate_chain_config(value, base=(key,))
    raise ValueError(f"the studio does not edit {key!r} of hookstudio.json")


@dataclass(frozen=True, eq=False)
class StudioConfigText:
    """One version of ``hookstudio.json`` as read (an empty config when there is no file)."""

    path: Path
    disk: _Disk
    parsed: _Parsed
    bom: bool

    @classmethod
    def read(cls, path: str | Path) -> StudioConfigText:
        path = Path(path)
        try:
            disk, parsed, bom = _read_config(path)
        except AgentDocumentError as exc:
            problem = exc.problem.replace("an agent config", "the studio's settings file")
            where = f" at line {exc.line}, column {exc.column}" if exc.line is not None else ""
            raise StudioConfigError(path, problem + where) from None
        return cls(path, disk, parsed, bom)

    @property
    def text(self) -> str:
        return self.parsed.text

    @property
    def document(self) -> dict[str, Any]:
        return self.parsed.document

    def section(self, key: str) -> Any:
        """The section's value as written, or ``ABSENT``."""
        return self.document.get(key, ABSENT)

    def same_on_disk(self) -> bool:
        return _read_disk(self.path).data == self.disk.data

    # -- new text ----------------------------------------------------------------------------

    def with_section(self, key: str, value: Any) -> str:
        """The file's text with ``key`` set to ``value`` (``ABSENT`` deletes it), every other
        byte as it is. An existing key keeps its place; a new one goes last."""
        parsed = self.parsed
        before = parsed.document
        if _same(before.get(key, ABSENT), value):
            return parsed.text
        if value is ABSENT:
            new_text = self._without(key)
        elif parsed.root is None:
            layout = _new_layout(NEW_FILE_FORMATTING, "")
            member = (_key_text(key, NEW_FILE_FORMATTING), _value_text(value, layout))
            new_text = _object_text([member], layout) + NEW_FILE_FORMATTING.trailing
        else:
            new_text = self._with(key, value)
        _check(new_text, before, key, value)
        return new_text

    def _with(self, key: str, value: Any) -> str:
        parsed = self.parsed
        root = parsed.root
        assert root is not None
        text, fmt = parsed.text, parsed.formatting
        same_key = [m for m in root.members if m.key == key]
        if same_key:
            member = same_key[-1]  # the one a reader of the file gets
            old = parsed.document[key]
            if isinstance(value, dict) and isinstance(old, dict):
                value_text = _hook_value_text(text, member, old, value, root, fmt)
            else:
                layout = _member_layout(text, member, _layout(text, root, fmt))
                value_text = _value_text(value, layout)
            return _apply(text, [(member.value_start, member.value_end, value_text)])
        if not root.members:
            layout = _new_layout(fmt, "")
            body = _object_text([(_key_text(key, fmt), _value_text(value, layout))], layout)
            return text[: root.start] + body + text[root.end :]
        last = root.members[-1]
        layout = _member_layout(text, last, _layout(text, root, fmt))
        addition = (
            layout.item_separator
            + _key_text(key, fmt)
            + layout.key_separator
            + _value_text(value, layout)
        )
        return _apply(text, [(last.value_end, last.value_end, addition)])

    def _without(self, key: str) -> str:
        """Every occurrence of ``key`` goes, so that an earlier duplicate does not take its
        place; with it goes one separator, so the members left read as before."""
        root = self.parsed.root
        assert root is not None
        members = root.members
        gone = {i for i, m in enumerate(members) if m.key == key}
        kept = [i for i in range(len(members)) if i not in gone]
        if not kept:
            return self.parsed.text[: root.start + 1] + self.parsed.text[root.end - 1 :]
        edits: list[_Edit] = []
        for i in sorted(gone):
            if i < kept[0]:
                edits.append((members[i].key_start, members[i + 1].key_start, ""))
            else:
                edits.append((members[i - 1].value_end, members[i].value_end, ""))
        return _apply(self.parsed.text, edits)


def _check(new_text: str, before: dict[str, Any], key: str, value: Any) -> None:
    """The new text parses to ``before`` with only ``key`` changed, key order included."""
    with deep_json():
        after = json.loads(new_text)
        others_same = _same(
            {k: v for k, v in before.items() if k != key},
            {k: v for k, v in after.items() if k != key},
        )
        section_ok = key not in after if value is ABSENT else _same(after.get(key), value)
    if not (others_same and section_ok):
        raise AssertionError(f"editing hookstudio.json would change more than {key}")


def save_section(
    path: str | Path, key: str, value: Any, *, base: Any, force: bool = False
) -> StudioConfigText:
    """Write ``value`` as section ``key`` (``ABSENT`` removes it) into the file as it is on disk
    now, and return the version written.

    ``base`` is the section as the editor loaded it. Raises :class:`SectionInvalid` (nothing
    written) when the value has an error, :class:`SectionChangedOutside` when the section on disk
    is no longer ``base`` and ``force`` is not set, and :class:`StudioConfigError` when the file on
    disk cannot be read as a JSON object (never overwritten, even with force)."""
    problems = errors(section_findings(key, value))
    if problems:
        raise SectionInvalid(problems)
    current = StudioConfigText.read(path)
    theirs = current.section(key)
    if not _same(theirs, base) and not force:
        raise SectionChangedOutside(key, theirs)
    text = current.with_section(key, value)
    if text == current.text and current.disk.data is not None:
        return current
    data = (codecs.BOM_UTF8 if current.bom else b"") + text.encode("utf-8")
    write_atomically(current.path, data)
    return StudioConfigText.read(current.path)
