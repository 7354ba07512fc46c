"""Render the README's screenshots from the real window, offscreen, on a copy of the bundled
workspace:

    .venv/bin/python docs/screenshots.py            # all of them
    .venv/bin/python docs/screenshots.py --screens  # only the window on each screen size

The window on each screen size (``window-1024x640.png`` and the others) is rendered by the same
check the layout test runs (``tests/support/window_audit.py``), one process per screen, since
the screen's size and the scale factor are fixed when Qt starts.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QEventLoop, QTimer
from PySide6.QtWidgets import QApplication

from studio.core.app_settings import AppSettings
from studio.ui.import_request_dialog import ImportRequestDialog
from studio.ui.main_window import MainWindow
from studio.ui.run_view import TAB_CALLS, TAB_DECISION, TAB_PROVIDER

DOCS = Path(__file__).resolve().parent
BUNDLED = DOCS.parent / "resources" / "sample-workspace"
BUNDLED_AGENT = DOCS.parent / "resources" / "sample-agent.adf"


def settle(ms: int = 400) -> None:
    loop = QEventLoop()
    QTimer.singleShot(ms, loop.quit)
    loop.exec()


def run(window: MainWindow, sample: str, hook: str | None = None, everywhere: bool = False):
    done: list = []
    if everywhere:
        window.results.comparison_shown.connect(done.append)
    else:
        window.run_finished.connect(done.append)
    window.sample_box.setCurrentText(sample)
    if hook:
        window.start_run(sample, None, hook)
    elif everywhere:
        window.run_on_every_target()
    else:
        window.run_selected()
    while not done:
        settle(30)
    settle(500)
    return done[0]


def shoot(window: MainWindow, name: str) -> None:
    window.grab().save(str(DOCS / name))
    print("wrote", DOCS / name)


def shoot_agent(window: MainWindow, folder: Path) -> None:
    """The bundled ADF agent (a copy in ``folder``, with its studio folder) after a run."""
    agent = folder / BUNDLED_AGENT.name
    shutil.copyfile(BUNDLED_AGENT, agent)
    state = BUNDLED_AGENT.with_name(BUNDLED_AGENT.name + ".hookstudio")
    shutil.copytree(
        state, agent.with_name(state.name), ignore=shutil.ignore_patterns(".hookstudio")
    )
    window.open_workspace(agent)
    window.editors.setCurrentWidget(window.hook_editor)
    window.workspace_panel.tree.expandAll()
    run(window, "support-ticket")
    shoot(window, "adf-agent.png")


# A captured Anthropic Messages body, as a proxy or an SDK log shows one.
CAPTURED = {
    "model": "claude-sonnet-4-5",
    "max_tokens": 2048,
    "system": [
        {"type": "text", "text": "You are a support agent.", "cache_control": {"type": "ephemeral"}}
    ],
    "messages": [
        {"role": "user", "content": "Why was order 4821 refunded twice?"},
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "Check the order log.", "signature": "c2ln"},
                {"type": "text", "text": "Let me read the order log."},
                {
                    "type": "tool_use",
                    "id": "toolu_1",
                    "name": "fs_read",
                    "input": {"path": "orders/4821.log"},
                },
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_1",
                    "content": "refund issued 09:14; refund issued 09:15",
                }
            ],
        },
    ],
    "tools": [
        {
            "name": "fs_read",
            "description": "Read a file",
            "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}},
        },
        {"type": "web_search_20250305", "name": "web_search", "max_uses": 3},
    ],
    "temperature": 0.2,
    "stream": True,
}


def shoot_import(window: MainWindow, samples: Path) -> None:
    dialog = ImportRequestDialog(samples, window)
    dialog.resize(1024, 640)
    dialog.show()
    dialog.body.setPlainText(json.dumps(CAPTURED, indent=2))
    settle(800)
    dialog.grab().save(str(DOCS / "import-request.png"))
    print("wrote", DOCS / "import-request.png")
    dialog.reject()


# (width, height, scale, file): the screens of the README's "On every screen".
SCREENS = [
    (1024, 640, 1, "window-1024x640.png"),
    (1366, 768, 1, "window-1366x768.png"),
    (1920, 1080, 1, "window-1920x1080.png"),
    (1024, 640, 2, "window-scale2.png"),
]


def shoot_screens() -> None:
    for width, height, scale, name in SCREENS:
        command = [sys.executable, "-m", "tests.support.window_audit", str(width), str(height)]
        command += ["--scale", str(scale), "--shot", str(DOCS / name)]
        subprocess.run(command, cwd=DOCS.parent, check=True, stdout=subprocess.DEVNULL)
        print("wrote", DOCS / name)


def main() -> int:
    shoot_screens()
    if "--screens" in sys.argv[1:]:
        return 0
    app = QApplication(sys.argv[:1])
    workspace = Path(tempfile.mkdtemp()) / "sample-workspace"
    shutil.copytree(BUNDLED, workspace, ignore=shutil.ignore_patterns(".hookstudio"))
    window = MainWindow(AppSettings(), None)
    window.resize(1366, 768)
    window.show()
    window.open_workspace(workspace)
    # As a user would, a moment passes before the first run: the runtimes get ready meanwhile.
    settle(1500)
    tabs = window.results.run.tabs

    run(window, "support-ticket")
    shoot(window, "window.png")

    provider = window.results.run.provider
    shown: list = []
    provider.preview_shown.connect(lambda: shown.append(True))
    tabs.setCurrentIndex(TAB_PROVIDER)
    while not shown:
        settle(30)
    settle()
    shoot(window, "provider-request.png")
    tabs.setCurrentIndex(0)

    run(window, "support-ticket", hook="lib/failing.ts:typoKey")
    shoot(window, "turn-error.png")

    run(window, "support-ticket-context", hook="lib/context.ts:withTicketContext")
    tabs.setCurrentIndex(TAB_CALLS)
    settle()
    shoot(window, "calls.png")

    run(window, "step-escalated")
    tabs.setCurrentIndex(TAB_DECISION)
    settle()
    shoot(window, "step-decision.png")

    run(window, "chain-refund")
    tabs.setCurrentIndex(TAB_DECISION)
    settle()
    shoot(window, "chain-timeline.png")

    run(window, "support-ticket", everywhere=True)
    shoot(window, "every-target.png")

    window.sample_box.setCurrentText("support-ticket")
    window.editors.setCurrentWidget(window.sample_editor)
    settle(800)
    shoot(window, "sample-editor.png")
    shoot_import(window, workspace / "samples")
    shoot_agent(window, workspace.parent)

    window.undo_stack.setClean()
    window.close()
    app.processEvents()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
