"""The Qt binding the project installs survives long sessions of ordinary calls."""

from __future__ import annotations

import subprocess
import sys


def test_a_hundred_thousand_void_calls_do_not_crash_the_interpreter():
    # A separate interpreter: a binding that leaks references to None aborts the process.
    probe = (
        "from PySide6.QtCore import QObject\n"
        "o = QObject()\n"
        "for _ in range(100_000):\n"
        "    o.setObjectName('x')\n"
        "print('alive')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-500:]
    assert done.stdout.strip() == "alive"
