"""hookstudio.json's step and chain sections edited visually: every other byte of the file is
kept, a section with an error is never written, an outside edit is never lost silently."""

from __future__ import annotations

import codecs
import json
from pathlib import Path

import pytest

from studio.core.chain.chain_draft import ChainDraft, ChainRow, move_row, remove_row
from studio.core.hook_source_section import HookSourceDraft
from studio.core.invocation.source_section import INVOCATION_HOOK
from studio.core.step.step_draft import STEP_HOOK
from studio.core.workspace.folder import Workspace
from studio.core.workspace.studio_config_edit import (
    ABSENT,
    SectionChangedOutside,
    SectionInvalid,
    StudioConfigError,
    StudioConfigText,
    save_section,
    section_findings,
)

# Tabs, a key the studio does not know, an escaped character, keys in an unusual order.
TABBED = (
    "{\n"
    '\t"future_key": {"a": [1,2,   3]},\n'
    '\t"chain": {\n'
    '\t\t"post": [],\n'
    '\t\t"pre": ["historyTrimmerHook", {"source": "lib/h.py:first"}, {"source": "lib/h.py:second", '
    '"timeout_ms": 2000}]\n'
    "\t},\n"
    '\t"env": {"GREETING": "gr\\u00fc\\u00df"},\n'
    '\t"step": {"source": "lib/prepare.py"},\n'
    '\t"version": 1\n'
    "}\n"
)


def write(path: Path, text: str) -> Path:
    path.write_bytes(text.encode("utf-8"))
    return path


def test_reordering_a_chain_rewrites_only_that_list(tmp_path):
    path = write(tmp_path / "hookstudio.json", TABBED)
    loaded = StudioConfigText.read(path)
    draft, notes = ChainDraft.load(loaded.section("chain"))
    assert notes == []
    moved = draft.with_rows("pre", move_row(draft.pre, 0, 2))

    save_section(path, "chain", moved.value(), base=loaded.section("chain"))

    expected = TABBED.replace(
        '\t\t"pre": ["historyTrimmerHook", {"source": "lib/h.py:first"}, {"source": '
        '"lib/h.py:second", "timeout_ms": 2000}]\n',
        '\t\t"pre": [\n'
        "\t\t\t{\n"
        '\t\t\t\t"source": "lib/h.py:first"\n'
        "\t\t\t},\n"
        "\t\t\t{\n"
        '\t\t\t\t"source": "lib/h.py:second",\n'
        '\t\t\t\t"timeout_ms": 2000\n'
        "\t\t\t},\n"
        '\t\t\t"historyTrimmerHook"\n'
        "\t\t]\n",
    )
    assert path.read_text(encoding="utf-8") == expected


def test_an_unchanged_draft_gives_back_the_same_bytes(tmp_path):
    path = write(tmp_path / "hookstudio.json", TABBED)
    loaded = StudioConfigText.read(path)
    chain, _ = ChainDraft.load(loaded.section("chain"))
    step = HookSourceDraft.load(loaded.section("step"))
    assert loaded.with_section("chain", chain.value()) == TABBED
    assert loaded.with_section("step", step.value()) == TABBED


def test_every_other_key_is_kept_on_a_one_line_crlf_file_with_a_bom(tmp_path):
    text = '{"version":1,"loops":["a"],"x-team":{"owner":"r\u00e9mi"},"step":{"source":"a.py"}}\r\n'
    path = tmp_path / "hookstudio.json"
    path.write_bytes(codecs.BOM_UTF8 + text.encode("utf-8"))
    loaded = StudioConfigText.read(path)

    save_section(
        path,
        "step",
        HookSourceDraft("b.py:go", loaded.section("step")).value(),
        base=ABSENT,
        force=True,
    )

    assert path.read_bytes() == codecs.BOM_UTF8 + text.replace('"a.py"', '"b.py:go"').encode()


def test_clearing_the_step_source_removes_the_key_and_nothing_else(tmp_path):
    path = write(tmp_path / "hookstudio.json", TABBED)
    loaded = StudioConfigText.read(path)

    save_section(
        path,
        "step",
        HookSourceDraft("", loaded.section("step")).value(),
        base=loaded.section("step"),
    )

    assert path.read_text() == TABBED.replace('\t"step": {"source": "lib/prepare.py"},\n', "")


def test_a_new_section_goes_last_in_the_files_style(tmp_path):
    path = write(tmp_path / "hookstudio.json", '{\n    "version": 1,\n    "loops": []\n}\n')
    draft = ChainDraft().with_rows("pre", [ChainRow.builtin("lazyModelDefaultsHook")])

    save_section(path, "chain", draft.value(), base=ABSENT)

    assert path.read_text() == (
        "{\n"
        '    "version": 1,\n'
        '    "loops": [],\n'
        '    "chain": {\n'
        '        "pre": [\n'
        '            "lazyModelDefaultsHook"\n'
        "        ]\n"
        "    }\n"
        "}\n"
    )


def test_a_workspace_without_the_file_gets_one_holding_the_section(tmp_path):
    path = tmp_path / "hookstudio.json"
    save_section(path, "step", HookSourceDraft("lib/prepare.py").value(), base=ABSENT)
    assert json.loads(path.read_text()) == {"step": {"source": "lib/prepare.py"}}
    assert Workspace.open(tmp_path).settings().section("step").source == "lib/prepare.py"


@pytest.mark.parametrize(
    ("row", "pointer"),
    [
        (ChainRow.builtin("historyTrimer"), "/chain/pre/0"),
        (ChainRow.builtin("toolCallValidatorHook"), "/chain/pre/0"),
        (ChainRow.user("lib/h.py:f", "abc"), "/chain/pre/0/timeout_ms"),
        (ChainRow.user("lib/h.py:f", "0"), "/chain/pre/0/timeout_ms"),
        (ChainRow.user("lib/h.py:f", "300001"), "/chain/pre/0/timeout_ms"),
        (ChainRow.user("", ""), "/chain/pre/0/source"),
        (ChainRow.user("../outside.py", ""), "/chain/pre/0/source"),
    ],
)
def test_an_invalid_chain_is_refused_and_the_file_keeps_its_bytes(tmp_path, row, pointer):
    path = write(tmp_path / "hookstudio.json", TABBED)
    loaded = StudioConfigText.read(path)
    draft, _ = ChainDraft.load(loaded.section("chain"))
    broken = draft.with_rows("pre", [row])

    assert pointer in [f.pointer for f in section_findings("chain", broken.value())]
    with pytest.raises(SectionInvalid):
        save_section(path, "chain", broken.value(), base=loaded.section("chain"))
    assert path.read_text() == TABBED


def test_a_step_source_outside_the_workspace_is_refused(tmp_path):
    path = write(tmp_path / "hookstudio.json", TABBED)
    value = HookSourceDraft("/etc/passwd:main").value()
    assert [f.pointer for f in section_findings("step", value)] == ["/step/source"]
    with pytest.raises(SectionInvalid):
        save_section(path, "step", value, base={"source": "lib/prepare.py"})
    assert path.read_text() == TABBED


def test_an_outside_edit_to_another_key_is_kept(tmp_path):
    path = write(tmp_path / "hookstudio.json", TABBED)
    loaded = StudioConfigText.read(path)
    outside = TABBED.replace('"version": 1', '"version": 1,\n\t"loops": ["night"]')
    write(path, outside)

    draft = HookSourceDraft("lib/other.py", loaded.section("step"))
    save_section(path, "step", draft.value(), base=loaded.section("step"))

    assert path.read_text() == outside.replace('"lib/prepare.py"', '"lib/other.py"')


def test_an_outside_edit_to_the_same_section_is_not_overwritten_unless_forced(tmp_path):
    path = write(tmp_path / "hookstudio.json", TABBED)
    loaded = StudioConfigText.read(path)
    outside = TABBED.replace('"post": []', '"post": ["repetitionDetectorHook"]')
    write(path, outside)
    draft, _ = ChainDraft.load(loaded.section("chain"))
    mine = draft.with_rows("pre", remove_row(draft.pre, 0))

    with pytest.raises(SectionChangedOutside) as raised:
        save_section(path, "chain", mine.value(), base=loaded.section("chain"))
    assert raised.value.theirs["post"] == ["repetitionDetectorHook"]
    assert path.read_text() == outside

    save_section(path, "chain", mine.value(), base=loaded.section("chain"), force=True)
    assert json.loads(path.read_text())["chain"] == mine.value()


def test_a_file_that_is_not_json_is_never_overwritten(tmp_path):
    path = write(tmp_path / "hookstudio.json", '{"version": 1,')
    with pytest.raises(StudioConfigError):
        StudioConfigText.read(path)
    with pytest.raises(StudioConfigError):
        save_section(path, "step", {"source": "a.py"}, base=ABSENT, force=True)
    assert path.read_text() == '{"version": 1,'


def test_rows_keep_what_the_editor_does_not_show(tmp_path):
    section = {
        "pre": [{"source": "lib/h.py:f", "timeout_ms": 30000, "note": "kept"}, 7],
        "x": True,
    }
    draft, _ = ChainDraft.load(section)
    assert draft.pre[0] == ChainRow("user", "lib/h.py:f", "30000", {"note": "kept"})
    assert draft.pre[1].kind == "other"
    assert draft.value() == section
    # An entry that is neither a name nor a source stays an error until its row is removed.
    assert "/chain/pre/1" in [f.pointer for f in section_findings("chain", draft.value())]


def test_the_default_validators_switch_is_written_only_when_it_says_something():
    assert ChainDraft().value() is ABSENT
    off = ChainDraft(default_post_validators=False)
    assert off.value() == {"default_post_validators": False}
    assert off.post_run_order() == []
    on = ChainDraft(post=(ChainRow.user("lib/h.py:check"),))
    assert on.post_run_order() == [
        "lib/h.py:check",
        "toolCallValidatorHook",
        "repetitionDetectorHook",
    ]


@pytest.mark.parametrize(
    ("path", "function", "source"),
    [
        ("lib/prepare.py", "main", "lib/prepare.py"),
        ("lib/prepare.py", "other", "lib/prepare.py:other"),
        ("lib/prepare.ts", "prepareStep", "lib/prepare.ts:prepareStep"),
        ("lib/prepare.ts", "main", "lib/prepare.ts:main"),
        ("lib/prepare.ts", "", "lib/prepare.ts"),
        ("", "main", ""),
    ],
)
def test_a_step_source_names_the_function_the_runtime_would_call(path, function, source):
    assert STEP_HOOK.join(path, function) == source
    if source:
        assert STEP_HOOK.split(source)[0] == path
        assert STEP_HOOK.split(source)[1] == (function or "prepareStep")


@pytest.mark.parametrize(
    ("path", "function", "source"),
    [
        ("lib/invocation.ts", "prepareInvocation", "lib/invocation.ts:prepareInvocation"),
        ("lib/invocation.ts", "", "lib/invocation.ts"),
        ("lib/invocation.py", "main", "lib/invocation.py"),
        ("lib/invocation.py", "prepare_invocation", "lib/invocation.py:prepare_invocation"),
    ],
)
def test_an_invocation_source_names_the_function_the_runtime_would_call(path, function, source):
    assert INVOCATION_HOOK.join(path, function) == source
    assert INVOCATION_HOOK.split(source) == (path, function or "prepareInvocation")


def test_the_invocation_section_is_saved_alone_and_judged_at_its_own_path(tmp_path):
    path = tmp_path / "hookstudio.json"
    original = '{\n  "version": 1,\n  "step": {\n    "source": "lib/prepare.ts"\n  }\n}\n'
    path.write_text(original)
    bad = HookSourceDraft("../outside.py").value()
    assert [f.pointer for f in section_findings("invocation", bad)] == ["/invocation/source"]
    with pytest.raises(SectionInvalid):
        save_section(path, "invocation", bad, base=ABSENT)
    assert path.read_text() == original

    save_section(path, "invocation", HookSourceDraft("lib/invocation.py").value(), base=ABSENT)

    # Last, in the file's own style; the step section keeps its bytes.
    assert path.read_text() == original[: -len("\n}\n")] + (
        ',\n  "invocation": {\n    "source": "lib/invocation.py"\n  }\n}\n'
    )
