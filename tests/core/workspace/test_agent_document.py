"""AgentDocument: agent.json edited without losing anything the user wrote (design.md), the
hook saved only when valid, atomically, and never over a change made outside the studio."""

from __future__ import annotations

import codecs
import json
import os
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from studio.core.pre_llm.targets import DraftInvalid, HookDraft, TargetRow, draft_to_config
from studio.core.workspace import agent_document
from studio.core.workspace.agent_document import (
    AgentDocument,
    AgentDocumentError,
    ExternalChange,
    FileStamp,
    HookConflict,
)
from studio.core.workspace.folder import Workspace
from tests.support.hypothesis_profiles import examples
from tests.support.json_strategies import json_values
from tests.support.paths import BUNDLED_WORKSPACE as SAMPLE_WORKSPACE

HOOK = {
    "source": "lib/policy.py:transform",
    "scope": "loops",
    "loops": ["researcher"],
    "include_main": True,
    "timeout_ms": 5000,
}
DOC: dict[str, Any] = {
    "name": "support-agent",
    "model": "claude-sonnet",
    "pre_llm_hook": HOOK,
    "limits": {"execution_timeout_ms": 30000},
    "code_execution": {"sys_lambda": False},
    "tools": [{"name": "search", "enabled": True}, {"name": "café ☕", "weights": [0.5, 1e-7]}],
}
MAIN_ONLY = {"source": "lib/policy.py:transform", "scope": "main"}

STYLES: dict[str, dict[str, Any]] = {
    "2 spaces": {"indent": 2},
    "4 spaces": {"indent": 4},
    "tabs": {"indent": "\t"},
    "compact": {"separators": (",", ":")},
    "one line": {},
}


def dump(document: Any, style: str, ensure_ascii: bool = False) -> str:
    return json.dumps(document, ensure_ascii=ensure_ascii, **STYLES[style]) + "\n"


def without(document: dict[str, Any], key: str) -> dict[str, Any]:
    return {k: v for k, v in document.items() if k != key}


def with_value(document: dict[str, Any], key: str, value: Any) -> dict[str, Any]:
    return {k: (value if k == key else v) for k, v in document.items()}


@pytest.fixture
def agent(tmp_path: Path) -> Path:
    return tmp_path / "agent.json"


def write(path: Path, text: str | bytes) -> AgentDocument:
    if isinstance(text, str):
        path.write_bytes(text.encode("utf-8"))
    else:
        path.write_bytes(text)
    return AgentDocument.load(path)


def main_draft(source: str = "lib/policy.py:transform", timeout: str = "") -> HookDraft:
    return HookDraft(source=source, timeout=timeout, rows=(TargetRow.main(),))


class TestRoundTrip:
    @pytest.mark.parametrize("style", STYLES)
    def test_saving_the_same_hook_gives_identical_bytes(self, agent: Path, style: str) -> None:
        original = dump(DOC, style).encode()
        doc = write(agent, original)
        assert doc.with_hook(doc.hook_config) == original.decode()
        doc.save(doc.hook_draft())
        assert agent.read_bytes() == original

    @pytest.mark.parametrize(
        "text",
        [
            # irregular spacing, blank lines, a key that is not aligned, no trailing newline
            '{ "name" : "a",\n\n     "pre_llm_hook":{"source":"x.py" ,"scope" : "main"} ,'
            '\n"limits":{ } }',
            # Windows line endings and a byte order mark are kept too
            '\ufeff{\r\n  "pre_llm_hook": {\r\n    "source": "x.py"\r\n  }\r\n}\r\n',
            # escapes are kept as written
            '{"n\\u0061me": "caf\\u00e9 \\ud83d\\ude00 \\/ \\" \\\\ \\t", '
            '"pre_llm_hook": {"source": "x\\u002epy"}}',
        ],
    )
    def test_any_formatting_round_trips(self, agent: Path, text: str) -> None:
        data = text.encode("utf-8")
        doc = write(agent, data)
        doc.save(doc.hook_draft())
        assert agent.read_bytes() == data
        assert doc.with_hook(dict(doc.hook_config)) == doc.text

    def test_the_sample_workspace_config_round_trips(self, agent: Path) -> None:
        data = (SAMPLE_WORKSPACE / "agent.json").read_bytes()
        doc = write(agent, data)
        doc.save(doc.hook_draft())
        assert agent.read_bytes() == data

    @pytest.mark.parametrize(
        ("style", "indent"),
        [("2 spaces", "  "), ("4 spaces", "    "), ("tabs", "\t"), ("compact", None)],
    )
    def test_indentation_is_detected(self, agent: Path, style: str, indent: str | None) -> None:
        doc = write(agent, dump(DOC, style))
        assert doc.formatting.indent == indent
        assert doc.formatting.trailing == "\n"

    def test_compact_separators_and_line_endings_are_detected(self, agent: Path) -> None:
        compact = write(agent, json.dumps(DOC, separators=(",", ":")))
        assert compact.formatting.key_separator == ":"
        assert compact.formatting.item_separator == ","
        assert compact.formatting.trailing == ""
        crlf = write(agent, dump(DOC, "2 spaces").replace("\n", "\r\n"))
        assert crlf.formatting.newline == "\r\n"


class TestChangingTheHook:
    @pytest.mark.parametrize("style", STYLES)
    def test_a_changed_hook_is_written_in_the_files_style(self, agent: Path, style: str) -> None:
        doc = write(agent, dump(DOC, style))
        doc.save(main_draft(timeout="2000"))
        expected_hook = {"source": HOOK["source"], "scope": "main", "timeout_ms": 2000}
        assert agent.read_text() == dump(with_value(DOC, "pre_llm_hook", expected_hook), style)

    def test_crlf_stays_crlf(self, agent: Path) -> None:
        doc = write(agent, dump(DOC, "2 spaces").replace("\n", "\r\n"))
        doc.save(main_draft())
        expected = dump(with_value(DOC, "pre_llm_hook", MAIN_ONLY), "2 spaces")
        assert agent.read_bytes() == expected.replace("\n", "\r\n").encode()

    def test_a_byte_order_mark_stays(self, agent: Path) -> None:
        doc = write(agent, codecs.BOM_UTF8 + dump(DOC, "2 spaces").encode())
        doc.save(main_draft())
        expected = dump(with_value(DOC, "pre_llm_hook", MAIN_ONLY), "2 spaces")
        assert agent.read_bytes() == codecs.BOM_UTF8 + expected.encode()

    def test_every_other_key_keeps_its_bytes_and_place(self, agent: Path) -> None:
        text = (
            '{\n  "name": "a",   "model" :"m",\n\n'
            '  "pre_llm_hook": {\n    "source": "x.py",\n    "scope": "main"\n  },\n'
            '  "limits": {"execution_timeout_ms": 3e4},\n'
            '  "z": [1,2,   3], "a": {"nested":  {"deep": null}}\n}\n'
        )
        doc = write(agent, text)
        new = doc.with_hook({"source": "y.py", "scope": "all"})
        head, _, tail = text.partition('{\n    "source": "x.py",\n    "scope": "main"\n  }')
        assert new == head + '{\n    "source": "y.py",\n    "scope": "all"\n  }' + tail
        assert list(json.loads(new)) == ["name", "model", "pre_llm_hook", "limits", "z", "a"]

    def test_unchanged_hook_members_keep_their_text(self, agent: Path) -> None:
        text = (
            '{\n  "pre_llm_hook": {\n    "source": "lib/p\\u002epy",\n    "scope": "main",\n'
            '    "timeout_ms": 5e3,\n    "note": "caf\\u00e9"\n  }\n}\n'
        )
        doc = write(agent, text)
        draft = doc.hook_draft().with_rows((TargetRow.main(), TargetRow.loop("r")))
        doc.save(draft)
        assert agent.read_text() == (
            '{\n  "pre_llm_hook": {\n    "source": "lib/p\\u002epy",\n    "scope": "loops",\n'
            '    "timeout_ms": 5e3,\n    "note": "caf\\u00e9",\n    "loops": [\n      "r"\n    ],\n'
            '    "include_main": true\n  }\n}\n'
        )

    def test_a_one_line_hook_stays_on_one_line(self, agent: Path) -> None:
        doc = write(agent, '{\n  "pre_llm_hook": {"source": "x.py", "scope": "main"},\n  "a": 1\n}')
        new = doc.with_hook({"source": "x.py", "scope": "loops", "loops": ["a", "b"]})
        assert new == (
            '{\n  "pre_llm_hook": {"source": "x.py", "scope": "loops", "loops": ["a", "b"]},'
            '\n  "a": 1\n}'
        )

    def test_a_hook_that_is_not_an_object_is_replaced_in_place(self, agent: Path) -> None:
        doc = write(agent, '{\n  "a": 1,\n  "pre_llm_hook": null,\n  "b": 2\n}\n')
        assert not doc.has_hook
        assert doc.hook_draft().rows == (TargetRow.main(),)
        doc.save(main_draft("h.py"))
        assert agent.read_text() == (
            '{\n  "a": 1,\n  "pre_llm_hook": {\n    "source": "h.py",\n    "scope": "main"\n  },'
            '\n  "b": 2\n}\n'
        )

    @pytest.mark.parametrize(("escaped", "written"), [(True, "caf\\u00e9"), (False, "café")])
    def test_non_ascii_is_escaped_only_where_the_file_does(
        self, agent: Path, escaped: bool, written: str
    ) -> None:
        doc = write(agent, dump({"name": "Zoë", "limits": {}}, "2 spaces", ensure_ascii=escaped))
        doc.save(main_draft("lib/café.py"))
        assert f'"source": "lib/{written}.py"' in agent.read_text()
        assert ("Zo\\u00eb" in agent.read_text()) is escaped


class TestAddingAndRemoving:
    @pytest.mark.parametrize("style", STYLES)
    def test_a_new_hook_goes_after_limits(self, agent: Path, style: str) -> None:
        base = without(DOC, "pre_llm_hook")
        doc = write(agent, dump(base, style))
        assert not doc.has_hook
        assert doc.hook_draft() == HookDraft()
        assert doc.hook_draft().rows == (TargetRow.main(),)
        doc.save(main_draft())
        keys = list(base)
        keys.insert(keys.index("limits") + 1, "pre_llm_hook")
        expected = {k: base.get(k, MAIN_ONLY) for k in keys}
        assert agent.read_text() == dump(expected, style)

    @pytest.mark.parametrize("style", STYLES)
    def test_a_new_hook_goes_at_the_end_without_limits(self, agent: Path, style: str) -> None:
        base = without(without(DOC, "pre_llm_hook"), "limits")
        doc = write(agent, dump(base, style))
        assert doc.with_hook(MAIN_ONLY) == dump({**base, "pre_llm_hook": MAIN_ONLY}, style)

    @pytest.mark.parametrize("text", ["{}", "{}\n", "  { }  \n", ""])
    def test_a_hook_in_an_empty_config(self, agent: Path, text: str) -> None:
        doc = write(agent, text)
        new = doc.with_hook(MAIN_ONLY)
        assert json.loads(new) == {"pre_llm_hook": MAIN_ONLY}
        assert json.dumps({"pre_llm_hook": MAIN_ONLY}, indent=2) in new

    @pytest.mark.parametrize("style", STYLES)
    def test_removing_the_hook_keeps_everything_else(self, agent: Path, style: str) -> None:
        doc = write(agent, dump(DOC, style))
        assert doc.without_hook() == dump(without(DOC, "pre_llm_hook"), style)
        doc.remove_hook()
        assert agent.read_text() == dump(without(DOC, "pre_llm_hook"), style)
        assert not doc.has_hook
        assert doc.remove_hook() == doc.text  # nothing left to remove

    @pytest.mark.parametrize(
        ("text", "expected"),
        [
            ('{"pre_llm_hook": {}, "a": 1}', '{"a": 1}'),
            ('{"a": 1, "pre_llm_hook": {}}', '{"a": 1}'),
            ('{"a": 1, "pre_llm_hook": {}, "b": 2}', '{"a": 1, "b": 2}'),
            ('{\n  "pre_llm_hook": {}\n}\n', "{}\n"),
            ('{"pre_llm_hook": 1, "a": 1, "pre_llm_hook": {}, "b": 2}', '{"a": 1, "b": 2}'),
            ('{"pre_llm_hook": 1, "pre_llm_hook": {}, "b": 2}', '{"b": 2}'),
        ],
    )
    def test_removing_takes_every_occurrence_and_its_separator(
        self, agent: Path, text: str, expected: str
    ) -> None:
        assert write(agent, text).without_hook() == expected

    def test_a_missing_file_is_created_with_just_the_hook(self, agent: Path) -> None:
        doc = AgentDocument.load(agent)
        assert not doc.exists
        assert doc.stamp is None
        assert doc.document == {}
        assert doc.hook_draft().rows == (TargetRow.main(),)
        assert doc.remove_hook() == ""
        assert not agent.exists()
        doc.save(main_draft())
        assert agent.read_text() == json.dumps({"pre_llm_hook": MAIN_ONLY}, indent=2) + "\n"
        assert doc.exists
        assert doc.stamp == FileStamp.of(agent.stat())
        assert doc.hook_config == MAIN_ONLY


class TestExternalChanges:
    """A file changed outside since it was loaded: the hook is merged into it as it is now (the
    cases of the merge itself are in tests/core/test_hook_merge.py)."""

    def test_an_outside_edit_of_another_key_is_kept(self, agent: Path) -> None:
        doc = write(agent, dump(DOC, "2 spaces"))
        theirs = dump({**DOC, "model": "other"}, "2 spaces")
        agent.write_text(theirs)
        assert doc.changed_on_disk()
        doc.save(main_draft())
        expected = with_value({**DOC, "model": "other"}, "pre_llm_hook", MAIN_ONLY)
        assert agent.read_text() == dump(expected, "2 spaces")
        assert not doc.changed_on_disk()

    def test_a_hook_changed_outside_and_here_is_a_conflict_and_nothing_is_written(
        self, agent: Path
    ) -> None:
        doc = write(agent, dump(DOC, "2 spaces"))
        theirs = dump(with_value(DOC, "pre_llm_hook", {**HOOK, "timeout_ms": 9000}), "2 spaces")
        agent.write_text(theirs)
        with pytest.raises(HookConflict, match=r"agent\.json was changed outside the studio"):
            doc.save(main_draft())
        with pytest.raises(ExternalChange):
            doc.remove_hook()
        assert agent.read_text() == theirs

    def test_force_keeps_ours_for_the_hook_and_theirs_for_the_rest(self, agent: Path) -> None:
        doc = write(agent, dump(DOC, "2 spaces"))
        changed = {**DOC, "model": "other", "pre_llm_hook": {**HOOK, "timeout_ms": 9000}}
        agent.write_text(dump(changed, "2 spaces"))
        doc.save(main_draft(), force=True)
        assert json.loads(agent.read_text()) == with_value(changed, "pre_llm_hook", MAIN_ONLY)

    def test_reload_then_save_keeps_their_change(self, agent: Path) -> None:
        doc = write(agent, dump(DOC, "2 spaces"))
        agent.write_text(dump({**DOC, "model": "other"}, "2 spaces"))
        doc.reload()
        assert not doc.changed_on_disk()
        doc.save(main_draft())
        expected = with_value({**DOC, "model": "other"}, "pre_llm_hook", MAIN_ONLY)
        assert agent.read_text() == dump(expected, "2 spaces")

    def test_a_new_stamp_alone_counts_as_a_change(self, agent: Path) -> None:
        doc = write(agent, dump(DOC, "2 spaces"))
        info = agent.stat()
        os.utime(agent, ns=(info.st_atime_ns, info.st_mtime_ns + 1_000_000_000))
        assert doc.changed_on_disk()

    def test_same_stamp_other_bytes_counts_as_a_change(self, agent: Path) -> None:
        doc = write(agent, '{"a": 1}')
        info = agent.stat()
        with open(agent, "r+b") as handle:  # same size, same inode, same mtime
            handle.write(b'{"a": 2}')
        os.utime(agent, ns=(info.st_atime_ns, info.st_mtime_ns))
        assert doc.stamp == FileStamp.of(agent.stat())
        assert doc.changed_on_disk()
        doc.save(main_draft())
        assert json.loads(agent.read_text()) == {"a": 2, "pre_llm_hook": MAIN_ONLY}

    def test_a_deleted_file_is_a_change(self, agent: Path) -> None:
        doc = write(agent, dump(DOC, "2 spaces"))
        agent.unlink()
        with pytest.raises(HookConflict, match="was deleted"):
            doc.save(main_draft())
        assert not agent.exists()
        doc.save(main_draft(), force=True)
        assert json.loads(agent.read_text()) == {"pre_llm_hook": MAIN_ONLY}

    def test_a_file_created_after_loading_a_missing_one_keeps_what_it_holds(
        self, agent: Path
    ) -> None:
        doc = AgentDocument.load(agent)
        agent.write_text('{"name": "theirs"}')
        doc.save(main_draft())
        assert json.loads(agent.read_text()) == {"name": "theirs", "pre_llm_hook": MAIN_ONLY}

    def test_a_file_broken_outside_is_never_overwritten_even_forced(self, agent: Path) -> None:
        doc = write(agent, dump(DOC, "2 spaces"))
        agent.write_text('{"name": "half typed",')
        with pytest.raises(AgentDocumentError, match="does not overwrite") as caught:
            doc.save(main_draft(), force=True)
        assert (caught.value.line, caught.value.column) == (1, 23)
        assert agent.read_text() == '{"name": "half typed",'

    def test_after_a_save_the_document_is_the_new_version(self, agent: Path) -> None:
        doc = write(agent, dump(DOC, "2 spaces"))
        text = doc.save(main_draft())
        assert doc.text == text == agent.read_text()
        assert doc.stamp == FileStamp.of(agent.stat())
        assert doc.hook_config == MAIN_ONLY
        assert not doc.changed_on_disk()
        doc.save(main_draft(timeout="1500"))  # a second save needs no reload
        assert json.loads(agent.read_text())["pre_llm_hook"]["timeout_ms"] == 1500


class TestInvalidDrafts:
    @pytest.mark.parametrize(
        "draft",
        [
            main_draft(source="  "),
            main_draft(timeout="12"),
            HookDraft(source="x.py", rows=()),
            HookDraft(source="x.py", rows=(TargetRow.empty(),)),
            HookDraft(source="../outside.py", rows=(TargetRow.main(),)),
        ],
    )
    def test_an_invalid_draft_is_refused_and_the_file_kept(
        self, agent: Path, draft: HookDraft
    ) -> None:
        original = dump(DOC, "4 spaces").encode()
        doc = write(agent, original)
        with pytest.raises(DraftInvalid) as caught:
            doc.save(draft)
        assert caught.value.findings
        assert agent.read_bytes() == original
        assert doc.text == original.decode()

    def test_an_invalid_draft_does_not_create_a_missing_file(self, agent: Path) -> None:
        with pytest.raises(DraftInvalid):
            AgentDocument.load(agent).save(main_draft(source=""))
        assert not agent.exists()


class TestUnreadableFiles:
    @pytest.mark.parametrize(
        ("text", "problem", "line", "column"),
        [
            ('{\n  "a": 1,\n  "b": \n}', "not JSON: Expecting value", 4, 1),
            ('{"a": 1}\n{"b": 2}', "not JSON: Extra data", 2, 1),
            ('{\n  "a": NaN\n}', "not JSON: NaN is not a JSON value", 2, 8),
            ('{"a": -Infinity}', "not JSON: -Infinity is not a JSON value", 1, 7),
            ("\n  [1, 2]", "an agent config must be a JSON object, got an array", 2, 3),
            ('"text"', "an agent config must be a JSON object, got a string", 1, 1),
        ],
    )
    def test_loading_says_what_and_where(
        self, agent: Path, text: str, problem: str, line: int, column: int
    ) -> None:
        agent.write_text(text)
        with pytest.raises(AgentDocumentError) as caught:
            AgentDocument.load(agent)
        error = caught.value
        assert error.problem.startswith(problem)
        assert (error.line, error.column) == (line, column)
        assert str(error) == f"{agent}: {error.problem} at line {line}, column {column}"
        assert agent.read_text() == text

    def test_an_unterminated_string_reads_as_one_sentence(self, agent: Path) -> None:
        # The parser's words end in "starting at": the place completes them, once.
        agent.write_text('{\n  "name": "cut')
        with pytest.raises(AgentDocumentError) as caught:
            AgentDocument.load(agent)
        assert str(caught.value) == (
            f"{agent}: not JSON: Unterminated string starting at line 2, column 11"
        )

    def test_not_utf8_gives_the_place_of_the_bad_byte(self, agent: Path) -> None:
        agent.write_bytes(b'{\n  "name": "caf\xe9"\n}')
        with pytest.raises(AgentDocumentError, match="not UTF-8") as caught:
            AgentDocument.load(agent)
        assert (caught.value.line, caught.value.column) == (2, 15)

    def test_a_folder_is_not_a_config(self, agent: Path) -> None:
        agent.mkdir()
        with pytest.raises(AgentDocumentError, match="is a folder"):
            AgentDocument.load(agent)

    @pytest.mark.skipif(os.geteuid() == 0, reason="root reads every file")
    def test_a_file_without_read_permission(self, agent: Path) -> None:
        agent.write_text("{}")
        agent.chmod(0)
        with pytest.raises(AgentDocumentError, match="cannot be read"):
            AgentDocument.load(agent)

    def test_a_file_that_cannot_be_read_is_never_written(
        self, agent: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        doc = write(agent, dump(DOC, "2 spaces"))

        def refused(*args: object, **kwargs: object) -> None:
            raise PermissionError(13, "Permission denied")

        monkeypatch.setattr(agent_document, "read_file", refused)
        with pytest.raises(AgentDocumentError, match="cannot be read"):
            AgentDocument.load(agent)
        with pytest.raises(AgentDocumentError, match="cannot be read"):
            doc.save(main_draft(), force=True)
        monkeypatch.undo()
        assert agent.read_text() == dump(DOC, "2 spaces")

    def test_a_save_keeps_the_files_permissions(self, agent: Path) -> None:
        doc = write(agent, dump(DOC, "2 spaces"))
        agent.chmod(0o600)
        doc.save(main_draft())
        assert agent.stat().st_mode & 0o777 == 0o600

    def test_a_failed_reload_keeps_the_document_and_saving_never_overwrites(
        self, agent: Path
    ) -> None:
        doc = write(agent, dump(DOC, "2 spaces"))
        agent.write_text("{ broken")
        with pytest.raises(AgentDocumentError):
            doc.reload()
        assert doc.document == DOC
        with pytest.raises(AgentDocumentError, match="does not overwrite"):
            doc.save(main_draft())
        with pytest.raises(AgentDocumentError):
            doc.save(main_draft(), force=True)
        with pytest.raises(AgentDocumentError):
            doc.remove_hook(force=True)
        assert agent.read_text() == "{ broken"

    def test_the_error_is_a_json_file_error(self, agent: Path) -> None:
        from studio.core.json.files import JsonFileError

        agent.write_text("[]")
        with pytest.raises(JsonFileError):
            AgentDocument.load(agent)


class TestDuplicateKeys:
    TEXT = (
        "{\n"
        '  "pre_llm_hook": {"source": "old.py"},\n'
        '  "limits": {"execution_timeout_ms": 1000, "execution_timeout_ms": 2000},\n'
        '  "pre_llm_hook": {"source": "new.py", "scope": "main"}\n'
        "}\n"
    )

    def test_the_last_one_counts_and_each_is_a_warning(self, agent: Path) -> None:
        doc = write(agent, self.TEXT)
        assert doc.document["pre_llm_hook"] == {"source": "new.py", "scope": "main"}
        assert doc.document["limits"] == {"execution_timeout_ms": 2000}
        assert list(doc.document) == ["pre_llm_hook", "limits"]
        assert doc.hook_draft().source == "new.py"
        found = {(w.pointer, w.severity, w.rule) for w in doc.warnings}
        assert found == {
            ("/pre_llm_hook", "warning", "agent.duplicate_key"),
            ("/limits/execution_timeout_ms", "warning", "agent.duplicate_key"),
        }
        messages = sorted(w.message for w in doc.warnings)
        assert "lines 3 and 3" in messages[0]
        assert "in limits" in messages[0]
        assert "lines 2 and 4" in messages[1]
        assert "uses the last one" in messages[1]

    def test_saving_edits_the_one_the_runtime_reads(self, agent: Path) -> None:
        doc = write(agent, self.TEXT)
        doc.save(main_draft("newer.py"))
        assert agent.read_text() == self.TEXT.replace("new.py", "newer.py")
        assert json.loads(agent.read_text())["pre_llm_hook"]["source"] == "newer.py"

    def test_removing_removes_every_one(self, agent: Path) -> None:
        doc = write(agent, self.TEXT)
        doc.remove_hook()
        assert agent.read_text() == (
            '{\n  "limits": {"execution_timeout_ms": 1000, "execution_timeout_ms": 2000}\n}\n'
        )

    def test_duplicates_inside_the_hook_are_folded_when_it_changes(self, agent: Path) -> None:
        doc = write(agent, '{"pre_llm_hook": {"source": "a.py", "scope": "all", "scope": "main"}}')
        assert doc.hook_draft().rows == (TargetRow.main(),)
        assert [w.pointer for w in doc.warnings] == ["/pre_llm_hook/scope"]
        doc.save(main_draft("b.py"))
        assert agent.read_text() == '{"pre_llm_hook": {"source": "b.py", "scope": "main"}}'


class TestWorkspace:
    def test_a_saved_hook_is_what_the_workspace_reads(self, tmp_path: Path) -> None:
        (tmp_path / "agent.json").write_text(dump(DOC, "2 spaces"))
        workspace = Workspace.open(tmp_path)
        assert workspace.agent_document()["pre_llm_hook"] == HOOK
        doc = AgentDocument.for_workspace(workspace)
        doc.save(main_draft())
        assert workspace.agent_document()["pre_llm_hook"] == MAIN_ONLY
        assert AgentDocument.for_workspace(tmp_path).hook_config == MAIN_ONLY

    def test_the_draft_round_trips_through_the_config(self, tmp_path: Path) -> None:
        doc = AgentDocument.load(SAMPLE_WORKSPACE / "agent.json")
        assert draft_to_config(doc.hook_draft()) == doc.hook_config


# ---------------------------------------------------------------------------------------------
# Properties: for any document, in any of the styles, an edit is exactly what json.dumps would
# write for the edited document, and the text outside the hook's value is never touched.

hook_configs = st.fixed_dictionaries(
    {"source": st.sampled_from(["a.py", "lib/hooks.py:go", "lib/é.py"])},
    optional={
        "scope": st.sampled_from(["all", "main", "loops"]),
        "loops": st.lists(st.sampled_from(["a", "b", "c"]), max_size=3),
        "timeout_ms": st.integers(1000, 300000) | st.just(2000.0),
        "note": json_values,
    },
)
documents = st.dictionaries(
    st.text(max_size=8).filter(lambda k: k != "pre_llm_hook"), json_values, max_size=6
)


@settings(max_examples=examples(150), deadline=None)
@given(
    document=documents,
    old=st.none() | hook_configs,
    new=hook_configs,
    place=st.integers(0, 6),
    style=st.sampled_from(list(STYLES)),
)
def test_edits_match_json_dumps_in_every_style(
    tmp_path_factory: pytest.TempPathFactory,
    document: dict[str, Any],
    old: dict[str, Any] | None,
    new: dict[str, Any],
    place: int,
    style: str,
) -> None:
    items = list(document.items())
    if old is not None:
        items.insert(min(place, len(items)), ("pre_llm_hook", old))
    before = dict(items)
    doc = write(tmp_path_factory.mktemp("p") / "agent.json", dump(before, style))
    if old is not None:
        assert doc.with_hook(new) == dump(with_value(before, "pre_llm_hook", new), style)
        assert doc.without_hook() == dump(without(before, "pre_llm_hook"), style)
    else:
        after = json.loads(doc.with_hook(new))
        assert after == {**before, "pre_llm_hook": new}
        others = [k for k in after if k != "pre_llm_hook"]
        assert others == list(before)
        if "limits" in before:
            assert list(after).index("pre_llm_hook") == list(after).index("limits") + 1
        else:
            assert list(after)[-1] == "pre_llm_hook"


_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[{}\[\]:,]|[^\s{}\[\]:,"]+')


@settings(max_examples=examples(150), deadline=None)
@given(
    document=documents,
    old=hook_configs,
    new=hook_configs,
    place=st.integers(0, 6),
    spacing=st.lists(st.sampled_from(["", " ", "\n", "\n  ", "\t", "\r\n", "  \n\n"]), min_size=1),
)
def test_edits_of_odd_formatting_touch_only_the_hook(
    tmp_path_factory: pytest.TempPathFactory,
    document: dict[str, Any],
    old: dict[str, Any],
    new: dict[str, Any],
    place: int,
    spacing: list[str],
) -> None:
    items = list(document.items())
    items.insert(min(place, len(items)), ("pre_llm_hook", old))
    before = dict(items)
    tokens = _TOKEN.findall(json.dumps(before, separators=(",", ":")))
    text = "".join(t + spacing[i % len(spacing)] for i, t in enumerate(tokens))
    doc = write(tmp_path_factory.mktemp("p") / "agent.json", text)
    root, _ = agent_document._scan(text)
    hook = next(m for m in root.members if m.key == "pre_llm_hook")
    for edited, value in ((doc.with_hook(new), new), (doc.without_hook(), None)):
        parsed = json.loads(edited)
        assert without(parsed, "pre_llm_hook") == without(before, "pre_llm_hook")
        assert list(without(parsed, "pre_llm_hook")) == list(without(before, "pre_llm_hook"))
        assert parsed.get("pre_llm_hook") == value
        if value is not None:
            assert edited.startswith(text[: hook.value_start])
            assert edited.endswith(text[hook.value_end :])
