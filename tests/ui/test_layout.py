"""The window on ordinary screens: at 1024×640, 1366×768, 1920×1080 and at 200 % on a 2048×1280
screen, it takes the size asked for, nothing is drawn over anything else, every action button is
inside the window and whole, Save is in view; a long name never widens it; its colours are
readable on light and dark palettes; no symbol it draws is missing from every font."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest
from PySide6.QtGui import QColor, QPalette, QRawFont
from PySide6.QtWidgets import QApplication

from studio.core.pre_llm.targets import HookDraft, TargetRow
from studio.ui.contrast import contrast_ratio
from studio.ui.result_style import accent

ROOT = Path(__file__).resolve().parents[2]
RUN_TIMEOUT_MS = 30_000
# The smallest screen the window must fit (the minimum).
SMALLEST = (1024, 640)
# WCAG 2 AA for body text.
READABLE = 4.5

SCREENS = [
    pytest.param(1024, 640, 1, id="1024x640"),
    pytest.param(1366, 768, 1, id="1366x768"),
    pytest.param(1920, 1080, 1, id="1920x1080"),
    pytest.param(1024, 640, 2, id="2048x1280-at-200%"),
]


@pytest.mark.parametrize(("width", "height", "scale"), SCREENS)
def test_the_window_fits_the_screen_with_nothing_drawn_over_anything(
    width: int, height: int, scale: int, tmp_path: Path
) -> None:
    """In its own process: the screen's size and the scale factor are fixed when Qt starts."""
    report_file = tmp_path / "report.json"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "tests.support.window_audit",
            str(width),
            str(height),
            "--scale",
            str(scale),
            "--report",
            str(report_file),
        ],
        cwd=ROOT,
        check=True,
        timeout=240,
        stdout=subprocess.DEVNULL,
    )
    report = json.loads(report_file.read_text(encoding="utf-8"))
    assert report["scale"] == scale
    assert report["screen"] == [width, height]
    assert report["size"] == [width, height]
    minimum_width, minimum_height = report["minimum"]
    assert minimum_width <= SMALLEST[0] and minimum_height <= SMALLEST[1]
    assert report["problems"] == []
    assert report["toolbar_hidden"] == []
    assert report["save_shown"]
    # However tall the Records dock is dragged, Save stays in view and no button is cut off.
    assert report["tall_records_dock"] == {"save_shown": True, "problems": []}


LONG_NAME = "support-ticket-" + "with-a-name-nobody-would-type-" * 4 + "x" * 60


def test_a_long_sample_name_never_widens_the_window(qtbot, window, sample_workspace):
    shutil.copyfile(
        sample_workspace / "samples" / "support-ticket.json",
        sample_workspace / "samples" / f"{LONG_NAME}.json",
    )
    window.resize(*SMALLEST)
    assert window.open_workspace(sample_workspace)
    qtbot.waitUntil(lambda: window.size().width() == SMALLEST[0])
    box_width = window.sample_box.width()
    window.sample_box.setCurrentText(LONG_NAME)
    with qtbot.waitSignal(window.run_finished, timeout=RUN_TIMEOUT_MS):
        window.run_selected()
    QApplication.processEvents()
    assert (window.width(), window.height()) == SMALLEST
    assert window.minimumSizeHint().width() <= SMALLEST[0]
    assert window.sample_box.width() == box_width
    assert LONG_NAME in window.sample_box.toolTip()
    header = window.results.header
    assert LONG_NAME in header.text()
    assert header.elided


def test_opening_another_workspace_clears_the_results_of_the_first(
    qtbot, window, sample_workspace, tmp_path
):
    assert window.open_workspace(sample_workspace)
    window.sample_box.setCurrentText("support-ticket")
    with qtbot.waitSignal(window.run_finished, timeout=RUN_TIMEOUT_MS):
        window.run_selected()
    assert "support-ticket" in window.results.header.text()
    other = tmp_path / "other"
    shutil.copytree(sample_workspace, other, ignore=shutil.ignore_patterns(".hookstudio"))
    assert window.open_workspace(other)
    assert "support-ticket" not in window.results.header.text()
    assert window.results.results == []


def palette(base: str, text: str) -> QPalette:
    colours = QPalette()
    for role in (QPalette.ColorRole.Base, QPalette.ColorRole.Window):
        colours.setColor(role, QColor(base))
    for role in (QPalette.ColorRole.Text, QPalette.ColorRole.WindowText):
        colours.setColor(role, QColor(text))
    return colours


PALETTES = [
    pytest.param("#ffffff", "#000000", id="light"),
    pytest.param("#1e1e1e", "#f0f0f0", id="dark"),
    pytest.param("#353535", "#ffffff", id="fusion-dark"),
]


@pytest.fixture
def app_palette(qapp):
    before = QApplication.palette()
    yield lambda base, text: QApplication.setPalette(palette(base, text))
    QApplication.setPalette(before)


@pytest.mark.parametrize(("base", "text"), PALETTES)
def test_accent_colours_are_readable_on_the_palettes_base(app_palette, base, text):
    app_palette(base, text)
    for kind in ("removed", "added", "changed", "error", "ok", "warning", "info"):
        ratio = contrast_ratio(accent(kind), QColor(base))
        assert ratio >= READABLE, (kind, ratio)


@pytest.mark.parametrize(("base", "text"), PALETTES)
def test_the_applies_to_mark_is_readable(qtbot, app_palette, base, text):
    from PySide6.QtGui import QUndoStack

    from studio.ui.hook_editor import HookEditor

    app_palette(base, text)
    editor = HookEditor(QUndoStack())
    qtbot.addWidget(editor)
    editor.load(HookDraft("lib/policy.py:transform", "5000", (TargetRow.main(),)), True)
    marks = [editor.applies.item(row, 1) for row in range(editor.applies.rowCount())]
    runs = [m for m in marks if m.text().startswith("✓")]
    assert runs
    for mark in runs:
        assert contrast_ratio(mark.foreground().color(), QColor(base)) >= READABLE


def test_contrast_ratio_matches_wcag():
    assert contrast_ratio(QColor("#000000"), QColor("#ffffff")) == pytest.approx(21.0)
    assert contrast_ratio(QColor("#777777"), QColor("#ffffff")) == pytest.approx(4.48, abs=0.01)
    # The fixed dark green the Applies-to table used, on a dark base.
    assert contrast_ratio(QColor(0, 128, 0), QColor("#1e1e1e")) < READABLE


def ui_symbols() -> set[str]:
    symbols = set()
    for source in (ROOT / "studio" / "ui").rglob("*.py"):
        for char in source.read_text(encoding="utf-8"):
            if ord(char) > 127 and unicodedata.category(char)[0] in "SP":
                symbols.add(char)
    return symbols


def test_every_symbol_the_window_draws_is_in_some_installed_font(qapp):
    """A symbol no font has is drawn as an empty box."""
    from PySide6.QtGui import QFont, QFontDatabase

    fonts = [QRawFont.fromFont(QApplication.font())] + [
        QRawFont.fromFont(QFont(family)) for family in QFontDatabase.families()
    ]
    missing = {
        f"U+{ord(c):04X} {unicodedata.name(c, '?')}"
        for c in ui_symbols()
        if not any(font.supportsCharacter(ord(c)) for font in fonts)
    }
    assert missing == set()


def shown_strings(source: Path) -> list[str]:
    """The string constants of a module that are not docstrings: what it can put on screen."""
    import ast

    tree = ast.parse(source.read_text(encoding="utf-8"))
    docstrings = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                docstrings.add(id(body[0].value))
    return [
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and id(node) not in docstrings
    ]


def test_the_window_says_things_in_plain_words_not_spec_sections():
    """No "crux §6": a section number of a specification means nothing to the user."""
    cited = [
        (source.name, text)
        for source in (ROOT / "studio" / "ui").rglob("*.py")
        for text in shown_strings(source)
        if "§" in text or "spec/" in text
    ]
    assert cited == []
