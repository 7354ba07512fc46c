"""How the window feels: time to the studio's first painted window against a bare PySide6 window
in the same run, and the GUI thread's longest stall while a hook runs on a 5 MB request and its
result is shown.

    QT_QPA_PLATFORM=offscreen .venv/bin/python benchmarks/gui_responsiveness.py [--runs N] [--json]

Every window opens in a fresh process (with its byte code cached, as an installed studio has
it), and the clock runs from the process's launch until the
window's first paint has ended, for the studio (started as ``hook-studio`` starts it, on a copy
of the bundled workspace) and for a bare ``QMainWindow`` of the same size; the two alternate,
and the medians are compared (target: at most 2x the bare window). The stall is the longest gap
between ticks of a 10 ms timer from a run's start until its diff is on screen (target: under
50 ms), measured in a window of its own process as well.
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
PAINT_RATIO_TARGET = 2.0
STALL_TARGET_MS = 50.0

# watch(window, painted) calls painted() once the window's first paint has ended: the zero
# timer set from inside the paint event fires only after the whole paint pass (every child
# included) is done. It imports Qt only when called, so that a probe can define it first.
_WATCH = """
def watch(window, painted):
    from PySide6.QtCore import QEvent, QObject, QTimer

    class FirstPaint(QObject):
        seen = False

        def eventFilter(self, watched, event):
            if watched is window and event.type() == QEvent.Type.Paint and not self.seen:
                self.seen = True
                QTimer.singleShot(0, painted)
            return False

    window.paint_probe = FirstPaint(window)
    window.installEventFilter(window.paint_probe)  # nothing is painted before the loop runs
"""
BARE_PROBE = (
    _WATCH
    + """
import sys
from PySide6.QtWidgets import QApplication, QMainWindow
app = QApplication(sys.argv[:1])
window = QMainWindow()
window.resize(1400, 880)

def painted():
    print("painted", flush=True)
    app.quit()

watch(window, painted)
window.show()
app.exec()
"""
)
# Exactly as ``hook-studio <workspace>`` starts (its command line, settings, qasync loop and
# all); the window it shows is watched for its first paint, and the studio quits once it ended.
STUDIO_PROBE = (
    _WATCH
    + """
import sys
from studio import cli
from studio.ui import app as start

shown = start.show_window

def show_and_watch(*args):
    window = shown(*args)

    def painted():
        from PySide6.QtWidgets import QApplication

        print("painted", flush=True)
        window.undo_stack.setClean()
        QApplication.quit()

    watch(window, painted)
    return window

start.show_window = show_and_watch
raise SystemExit(cli.main(sys.argv[1:]))
"""
)


def launch_env(byte_code: Path) -> dict[str, str]:
    """The windows' environment: byte code cached (in ``byte_code``), as an installed studio
    has it, even where the shell says not to write it, and settings in a folder beside it."""
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(byte_code)
    # The studio's settings of this run only, not the user's (their last workspace, say).
    env["XDG_CONFIG_HOME"] = str(byte_code.parent / "config")
    return env


def time_to_paint(probe: str, workspace: Path, env: dict[str, str]) -> float:
    """Milliseconds from launching a fresh process to its window's first paint."""
    started = time.perf_counter()
    child = subprocess.Popen(
        [sys.executable, "-c", probe, str(workspace)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        env=env,
    )
    assert child.stdout is not None
    line = child.stdout.readline()
    elapsed = time.perf_counter() - started
    _, err = child.communicate(timeout=60)
    if line.strip() != "painted":
        raise SystemExit(f"the window never painted:\n{err}")
    return elapsed * 1000


def paint_times(workspace: Path, runs: int, env: dict[str, str]) -> tuple[list[float], list[float]]:
    """(bare, studio) times to paint, measured alternately so both see the same machine; one
    untimed launch of each first fills the byte-code cache."""
    time_to_paint(BARE_PROBE, workspace, env)
    time_to_paint(STUDIO_PROBE, workspace, env)
    bare: list[float] = []
    studio: list[float] = []
    for _ in range(runs):
        bare.append(time_to_paint(BARE_PROBE, workspace, env))
        studio.append(time_to_paint(STUDIO_PROBE, workspace, env))
    return bare, studio


def five_megabyte_request() -> dict[str, Any]:
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


class Gaps:
    """The time between successive ticks of a timer on the GUI thread."""

    def __init__(self, clock: Any) -> None:
        self.clock = clock
        self.gaps: list[int] = []
        self.last = 0

    def tick(self) -> None:
        now = self.clock.elapsed()
        self.gaps.append(now - self.last)
        self.last = now


def run_until(condition: Any, seconds: float = 120.0) -> None:
    from PySide6.QtCore import QEventLoop, QTimer

    deadline = time.monotonic() + seconds
    waiter = QEventLoop()
    while not condition():
        if time.monotonic() > deadline:
            raise SystemExit("timed out")
        QTimer.singleShot(5, waiter.quit)
        waiter.exec()


def window_with_sample(workspace: Path, sample: str) -> tuple[Any, Any]:
    """The studio's window on ``workspace``, made as ``hook-studio`` makes it, once ``sample``
    is open in its sample editor: the application and the window."""
    from studio.ui.app import import_before_qt, show_window

    import_before_qt()
    from PySide6.QtWidgets import QApplication

    from studio.core.app_settings import AppSettings

    app = QApplication.instance() or QApplication(sys.argv[:1])
    window = show_window(AppSettings(), None, workspace)
    opened: list[str] = []
    window.sample_editor.sample_opened.connect(opened.append)
    window.sample_box.setCurrentText(sample)
    run_until(lambda: sample in opened)
    return app, window


def ticking() -> tuple[Gaps, Any]:
    """A 10 ms timer on the GUI thread, started, and the gaps between its ticks."""
    from PySide6.QtCore import QElapsedTimer, QTimer

    gaps = Gaps(QElapsedTimer())
    timer = QTimer()
    timer.setInterval(10)
    timer.timeout.connect(gaps.tick)
    gaps.clock.start()
    timer.start()
    return gaps, timer


def stall_during_run(workspace: Path, runs: int) -> list[float]:
    """The longest GUI-thread gap of each of ``runs`` runs on the 5 MB sample, in this process."""
    app, window = window_with_sample(workspace, "five-mb")
    stalls = []
    for _ in range(runs):
        finished: list[Any] = []
        window.run_finished.connect(finished.append)
        gaps, timer = ticking()
        window.run_selected()
        run_until(lambda done=finished: bool(done) and window.results.diff_ready)
        timer.stop()
        window.run_finished.disconnect(finished.append)
        stalls.append(float(max(gaps.gaps)) if gaps.gaps else 0.0)
        assert finished[0].status == "ok", finished[0].turn_error
    window.undo_stack.setClean()
    window.close()
    app.processEvents()
    return stalls


def json_of_child(arguments: list[str], what: str, env: dict[str, str] | None = None) -> Any:
    """The JSON a fresh ``python arguments`` prints last; the benchmark stops, saying that
    ``what`` stopped, when the child fails."""
    child = subprocess.run(
        [sys.executable, *arguments],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        check=False,
    )
    if child.returncode != 0:
        raise SystemExit(f"{what} stopped:\n{child.stderr}")
    return json.loads(child.stdout.strip().splitlines()[-1])


def stalls_in_fresh_process(workspace: Path, runs: int, env: dict[str, str]) -> list[float]:
    arguments = [__file__, "--stall-only", str(workspace), "--runs", str(runs)]
    stalls: list[float] = json_of_child(arguments, "the run window", env)
    return stalls


def prepare_workspace(folder: Path) -> tuple[Path, int]:
    """A copy of the bundled workspace with a 5 MB sample; its path and the sample's size."""
    workspace = folder / "ws"
    shutil.copytree(
        ROOT / "resources" / "sample-workspace",
        workspace,
        ignore=shutil.ignore_patterns(".hookstudio"),
    )
    sample = workspace / "samples" / "five-mb.json"
    sample.write_text(json.dumps({"loop": "main", "request": five_megabyte_request()}))
    return workspace, sample.stat().st_size


def measure(runs: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        workspace, size = prepare_workspace(Path(tmp))
        # The 5 MB sample is not the one shown at launch: the bundled workspace opens as is.
        launch_ws = Path(tmp) / "launch"
        shutil.copytree(
            ROOT / "resources" / "sample-workspace",
            launch_ws,
            ignore=shutil.ignore_patterns(".hookstudio"),
        )
        env = launch_env(Path(tmp) / "byte-code")
        bare, studio = paint_times(launch_ws, runs, env)
        stalls = stalls_in_fresh_process(workspace, runs, env)
    bare_ms = statistics.median(bare)
    studio_ms = statistics.median(studio)
    stall_ms = statistics.median(stalls)
    return {
        "runs": runs,
        "bare_window_painted_ms_median": round(bare_ms, 1),
        "studio_window_painted_ms_median": round(studio_ms, 1),
        "studio_window_painted_ms_max": round(max(studio), 1),
        "paint_ratio": round(studio_ms / bare_ms, 2),
        "paint_ratio_target": PAINT_RATIO_TARGET,
        "sample_bytes": size,
        "gui_longest_stall_ms_median": stall_ms,
        "gui_longest_stall_ms_max": max(stalls),
        "stall_target_ms": STALL_TARGET_MS,
        "stall_ratio": round(stall_ms / STALL_TARGET_MS, 2),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7, help="windows of each kind (default 7)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--stall-only", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    runs = max(1, args.runs)
    if args.stall_only is not None:
        print(json.dumps(stall_during_run(args.stall_only, runs)))
        return 0
    figures = measure(runs)
    if args.json:
        print(json.dumps(figures))
        return 0
    print(f"{figures['runs']} runs of each, medians (Python {sys.version.split()[0]})")
    print(
        f"window painted: studio {figures['studio_window_painted_ms_median']} ms, "
        f"bare PySide6 {figures['bare_window_painted_ms_median']} ms: "
        f"{figures['paint_ratio']}x (target <= {PAINT_RATIO_TARGET}x)"
    )
    print(
        f"longest GUI stall during a {figures['sample_bytes']:,}-byte run: "
        f"{figures['gui_longest_stall_ms_median']} ms, "
        f"max {figures['gui_longest_stall_ms_max']} ms "
        f"(target < {STALL_TARGET_MS:.0f} ms: {figures['stall_ratio']}x the target)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
