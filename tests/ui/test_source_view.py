"""The source view colours Python and TypeScript/JavaScript; the workspace panel lists both."""

from __future__ import annotations

from pathlib import Path

import pytest

from studio.core.shown_text import LINE_CHARS_SHOWN
from studio.core.workspace.folder import Workspace
from studio.ui.code_highlighter import (
    COMMENT,
    IN_COMMENT,
    IN_TEMPLATE,
    IN_TRIPLE_DOUBLE,
    KEYWORD,
    NORMAL,
    NUMBER,
    PYTHON,
    SCRIPT,
    STRING,
    code_tokens,
    language_of,
)
from studio.ui.engine_bridge import EngineBridge
from studio.ui.source_view import COLOURED_MOST, SourceView
from studio.ui.workspace_panel import KIND_ROLE, WorkspacePanel

POLICY_TS = """\
// The policy hook.
enum Level { Low = 1, High = 0x10 }
/* a comment
   over two lines */
export async function transform(input: any): Promise<any> {
  const note = `level ${Level.High}
and more`;
  return { ...input.request, system: 'policy', note };
}
"""


def coloured(line: str, language: str, state: int = NORMAL) -> tuple[list[tuple[str, str]], int]:
    tokens, end = code_tokens(line, language, state)
    return [(line[start : start + length], kind) for start, length, kind in tokens], end


def test_typescript_keywords_strings_comments_and_numbers():
    assert coloured("export const f = async (x = 1.5e3) => 'a // b'; // end", SCRIPT) == (
        [
            ("export", KEYWORD),
            ("const", KEYWORD),
            ("async", KEYWORD),
            ("1.5e3", NUMBER),
            ("'a // b'", STRING),
            ("// end", COMMENT),
        ],
        NORMAL,
    )
    assert coloured('const s = "say \\"hi\\"" + 0x1F;', SCRIPT)[0] == [
        ("const", KEYWORD),
        ('"say \\"hi\\""', STRING),
        ("0x1F", NUMBER),
    ]


def test_block_comments_and_template_literals_run_over_lines():
    first, state = coloured("let a = 1; /* starts", SCRIPT)
    assert first[-1] == ("/* starts", COMMENT) and state == IN_COMMENT
    assert coloured("ends */ return a2;", SCRIPT, state) == (
        [("ends */", COMMENT), ("return", KEYWORD)],
        NORMAL,
    )
    first, state = coloured("const t = `one ${x}", SCRIPT)
    assert state == IN_TEMPLATE
    assert coloured("two` + 3", SCRIPT, state) == ([("two`", STRING), ("3", NUMBER)], NORMAL)


def test_python_keywords_strings_comments_and_docstrings():
    assert coloured("def f(a=1):  # note", PYTHON)[0] == [
        ("def", KEYWORD),
        ("1", NUMBER),
        ("# note", COMMENT),
    ]
    first, state = coloured('    """A docstring', PYTHON)
    assert first == [('"""', STRING), ("A docstring", STRING)] and state == IN_TRIPLE_DOUBLE
    assert coloured('ends""" if x else rb"y"', PYTHON, state) == (
        [('ends"""', STRING), ("if", KEYWORD), ("else", KEYWORD), ('rb"y"', STRING)],
        NORMAL,
    )


def test_positions_count_utf16_units_as_qt_does():
    tokens, _ = code_tokens("'😀' + 2", SCRIPT)
    assert tokens == [(0, 4, STRING), (7, 1, NUMBER)]


def test_the_language_follows_the_extension():
    assert [language_of(p) for p in ("a.ts", "a.mts", "a.js", "a.mjs", "a.py", "a.json")] == [
        SCRIPT,
        SCRIPT,
        SCRIPT,
        SCRIPT,
        PYTHON,
        None,
    ]


def formats_of_line(view: SourceView, number: int) -> dict[str, str]:
    """The colour of each coloured piece of a line, by its text."""
    block = view.text.document().findBlockByLineNumber(number - 1)
    text = block.text()
    return {
        text[r.start : r.start + r.length]: r.format.foreground().color().name()
        for r in block.layout().formats()
    }


@pytest.fixture
def bridge():
    engine = EngineBridge()
    yield engine
    engine.shutdown()


def test_the_source_view_colours_a_ts_file_and_marks_the_line(qtbot, bridge, tmp_path: Path):
    path = tmp_path / "policy.ts"
    path.write_text(POLICY_TS)
    view = SourceView(bridge)
    qtbot.addWidget(view)
    view.show_file(path, 5, "lib/policy.ts")
    assert view.title.text() == "lib/policy.ts, line 5"
    assert view.text.textCursor().blockNumber() == 4
    comment = formats_of_line(view, 1)["// The policy hook."]
    enum = formats_of_line(view, 2)
    assert enum["enum"] != comment and enum["0x10"] not in (enum["enum"], comment)
    assert formats_of_line(view, 4) == {"   over two lines */": comment}
    assert formats_of_line(view, 7)["and more`"] == formats_of_line(view, 8)["'policy'"]

    plain = tmp_path / "notes.txt"
    plain.write_text("export const x = 1;\n")
    view.show_file(plain, 1, "notes.txt")
    assert formats_of_line(view, 1) == {}


def test_a_source_with_a_line_too_long_to_lay_out_is_shown_cut_and_read_only(
    qtbot, bridge, sample_workspace: Path
):
    source = sample_workspace / "lib" / "policy.py"
    text = "def transform(payload):\n    return " + "1 + " * 300_000 + "1\n"
    source.write_text(text)
    view = SourceView(bridge)
    qtbot.addWidget(view)
    view.set_workspace(Workspace.open(sample_workspace))
    view.show_source("lib/policy.py", 2)
    shown = view.text.toPlainText().split("\n")
    assert shown[0] == "def transform(payload):"
    assert len(shown[1]) == LINE_CHARS_SHOWN + len(" … (cut: 1,200,012 characters)")
    assert shown[1].endswith(" … (cut: 1,200,012 characters)")
    assert not view.editable and view.text.isReadOnly()
    assert "read-only here: line 2 has 1,200,012 characters" in view.state.text()
    assert source.read_text() == text
    source.write_text("def transform(payload):\n    return payload['request']\n")
    view.show_source("lib/policy.py", 1)
    assert view.editable and "read-only" not in view.state.text()


def test_the_workspace_panel_lists_typescript_and_javascript_sources(qtbot, sample_workspace):
    lib = sample_workspace / "lib"
    (lib / "policy.ts").write_text(POLICY_TS)
    (lib / "helpers.mjs").write_text("export function main() {}\n")
    (lib / "widget.tsx").write_text("export const main = () => <b />;\n")
    (sample_workspace / "node_modules" / "x").mkdir(parents=True)
    (sample_workspace / "node_modules" / "x" / "index.js").write_text("")
    panel = WorkspacePanel()
    qtbot.addWidget(panel)
    panel.set_workspace(Workspace.open(sample_workspace))
    sources = next(
        panel.tree.topLevelItem(i)
        for i in range(panel.tree.topLevelItemCount())
        if panel.tree.topLevelItem(i).text(0) == "Hook sources"
    )
    listed = [sources.child(i).text(0) for i in range(sources.childCount())]
    assert {"lib/policy.ts", "lib/helpers.mjs", "lib/policy.py"} <= set(listed)
    assert "lib/widget.tsx" not in listed
    assert not any(p.startswith("node_modules") for p in listed)
    assert sources.child(listed.index("lib/policy.ts")).data(0, KIND_ROLE) == "source"


def test_a_source_too_large_to_colour_is_shown_plain_and_editable(
    qtbot, bridge, sample_workspace: Path
):
    source = sample_workspace / "lib" / "policy.py"
    line = "x = transform(payload) + 1  # a line\n"
    text = "def transform(payload):\n    return payload\n" + line * (COLOURED_MOST // len(line))
    source.write_text(text)
    view = SourceView(bridge)
    qtbot.addWidget(view)
    view.set_workspace(Workspace.open(sample_workspace))
    view.show_source("lib/policy.py", 1)
    assert formats_of_line(view, 1) == {}
    assert f"not coloured: {len(text):,} characters" in view.state.text()
    assert view.editable and not view.text.isReadOnly()
    source.write_text("def transform(payload):\n    return payload\n")
    view.show_source("lib/policy.py", 1)
    assert formats_of_line(view, 1) != {}
    assert "not coloured" not in view.state.text()
