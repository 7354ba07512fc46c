"""How the window feels: time to a painted window, and the GUI thread's longest stall while a
hook runs on a 5 MB request and its result is shown.

    QT_QPA_PLATFORM=offscreen .venv/bin/python benchmarks/gui_responsiveness.py [--runs N] [--json]

The stall is the longest gap between ticks of a 10 ms timer, from the run's start until its
diff is on screen.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from tool_loop_request import tool_loop_request

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

ROOT = Path(__file__).resolve().parents[1]
LAUNCH_PROBE = """
import sys, time
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication
from studio.core.app_settings import AppSettings
from studio.ui.main_window import MainWindow
app = QApplication(sys.argv[:1])
window = MainWindow(AppSettings(), None)
window.show()
window.open_workspace(sys.argv[1])
def painted():
    print("painted", flush=True)
    window.undo_stack.setClean()
    window.close()
    app.quit()
QTimer.singleShot(0, painted)
app.exec()
"""


def launch_times(workspace: Path, runs: int) -> list[float]:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        child = subprocess.Popen(
            [sys.executable, "-c", LAUNCH_PROBE, str(workspace)],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        assert child.stdout is not None
        line = child.stdout.readline()
        elapsed = time.perf_counter() - started
        child.wait(30)
        if line.strip() == "painted":
            times.append(elapsed * 1000)
    return times


def five_megabyte_request() -> dict:
    return tool_loop_request(
        rounds=2000,
        question="lorem ipsum dolor " * 60,
        text="checking the records " * 30,
        query="x",
        result="r" * 900,
        tools=200,
        description="d" * 200,
        options={"temperature": 0.7},
    )


class _Gaps:
    """The time between successive ticks of a timer on the GUI thread."""

    def __init__(self, clock: Any) -> None:
        self.clock = clock
        self.gaps: list[int] = []
        self.last = 0

    def tick(self) -> None:
        now = self.clock.elapsed()
        self.gaps.append(now - self.last)
        self.last = now


def stall_during_run(workspace: Path, runs: int) -> list[float]:
    from PySide6.QtCore import QElapsedTimer, QEventLoop, QTimer
    from PySide6.QtWidgets import QApplication

    from studio.core.app_settings import AppSettings
    from studio.ui.main_window import MainWindow

    app = QApplication.instance() or QApplication(sys.argv[:1])
    window = MainWindow(AppSettings(), None)
    window.show()
    window.open_workspace(workspace)
    opened: list[str] = []
    window.sample_editor.sample_opened.connect(opened.append)
    window.sample_box.setCurrentText("five-mb")
    waiter = QEventLoop()
    while "five-mb" not in opened:
        QTimer.singleShot(5, waiter.quit)
        waiter.exec()
    stalls = []
    for _ in range(runs):
        gaps = _Gaps(QElapsedTimer())
        timer = QTimer()
        timer.setInterval(10)
        timer.timeout.connect(gaps.tick)
        finished = []
        window.run_finished.connect(finished.append)
        gaps.clock.start()
        timer.start()
        window.run_selected()
        waiter = QEventLoop()
        while not (finished and window.results.diff_ready):
            QTimer.singleShot(5, waiter.quit)
            waiter.exec()
        timer.stop()
        window.run_finished.disconnect(finished.append)
        stalls.append(float(max(gaps.gaps)) if gaps.gaps else 0.0)
        assert finished[0].status == "ok", finished[0].turn_error
    window.undo_stack.setClean()
    window.close()
    app.processEvents()
    return stalls


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        workspace = Path(tmp) / "ws"
        shutil.copytree(
            ROOT / "resources" / "sample-workspace",
            workspace,
            ignore=shutil.ignore_patterns(".hookstudio"),
        )
        sample = workspace / "samples" / "five-mb.json"
        sample.write_text(json.dumps({"loop": "main", "request": five_megabyte_request()}))
        size = sample.stat().st_size
        launch = launch_times(workspace, args.runs)
        stalls = stall_during_run(workspace, args.runs)
    figures = {
        "launch_to_painted_ms_median": round(statistics.median(launch), 1),
        "launch_to_painted_ms_max": round(max(launch), 1),
        "sample_bytes": size,
        "gui_longest_stall_ms_median": statistics.median(stalls),
        "gui_longest_stall_ms_max": max(stalls),
        "runs": args.runs,
    }
    if args.json:
        print(json.dumps(figures))
    else:
        for key, value in figures.items():
            print(f"{key:>30}  {value}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
