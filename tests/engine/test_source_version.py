"""A hook file's version, as the engine checks it before giving a call to a spare that loaded
the hook ahead: every edit is seen, however little it changes the file's stat."""

from __future__ import annotations

import os
from pathlib import Path

from studio.core.workspace.file_stamps import RECENT_WRITE_NS
from studio.engine import source_version


def settled(path: Path) -> None:
    """Date the file's last write back beyond the clock ticks in which a write can hide."""
    back = os.stat(path).st_mtime_ns - 2 * RECENT_WRITE_NS
    os.utime(path, ns=(back, back))


def recorded(path: Path) -> list[source_version.FileVersion]:
    version = source_version.file_version(str(path))
    assert version is not None
    return [version]


def test_an_untouched_file_is_the_version_recorded(tmp_path: Path) -> None:
    hook = tmp_path / "hook.py"
    hook.write_text("def main(payload):\n    return payload\n")
    settled(hook)
    versions = recorded(hook)
    assert all(source_version.unchanged(versions) for _ in range(3))


def test_an_edit_that_keeps_size_and_modification_time_is_seen(tmp_path: Path) -> None:
    hook = tmp_path / "hook.py"
    hook.write_text("def main(payload):\n    return 1\n")
    settled(hook)
    versions = recorded(hook)
    assert source_version.unchanged(versions)
    before = os.stat(hook)
    hook.write_text("def main(payload):\n    return 2\n")
    os.utime(hook, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert os.stat(hook).st_size == before.st_size
    assert not source_version.unchanged(versions)


def test_an_edit_right_after_the_check_is_seen(tmp_path: Path) -> None:
    hook = tmp_path / "hook.py"
    hook.write_text("def main(payload):\n    return 1\n")
    versions = recorded(hook)
    assert source_version.unchanged(versions)
    hook.write_text("def main(payload):\n    return 2\n")
    assert not source_version.unchanged(versions)
    assert source_version.unchanged(recorded(hook))


def test_a_file_replaced_by_another_of_the_same_stat_is_seen(tmp_path: Path) -> None:
    hook = tmp_path / "hook.py"
    hook.write_text("def main(payload):\n    return 1\n")
    settled(hook)
    versions = recorded(hook)
    assert source_version.unchanged(versions)
    other = tmp_path / "other.py"
    other.write_text("def main(payload):\n    return 2\n")
    mtime = os.stat(hook).st_mtime_ns
    os.utime(other, ns=(mtime, mtime))
    other.replace(hook)
    assert not source_version.unchanged(versions)
