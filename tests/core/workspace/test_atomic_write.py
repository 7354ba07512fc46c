"""write_atomically: all of the new bytes or none of them, and never a stray temporary file."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

import pytest

from studio.core.workspace import atomic_write
from studio.core.workspace.atomic_write import write_atomically

ORIGINAL = b'{\n  "name": "agent"\n}\n'


def listing(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


@pytest.fixture
def original(tmp_path: Path) -> Path:
    path = tmp_path / "agent.json"
    path.write_bytes(ORIGINAL)
    return path


def test_replaces_the_contents(original: Path) -> None:
    write_atomically(original, b"new contents")
    assert original.read_bytes() == b"new contents"
    assert listing(original.parent) == ["agent.json"]


def test_creates_a_missing_file_with_the_usual_permissions(tmp_path: Path) -> None:
    path = tmp_path / "new.json"
    write_atomically(path, b"{}")
    assert path.read_bytes() == b"{}"
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(path.stat().st_mode) == 0o666 & ~umask


def test_keeps_the_permission_bits(original: Path) -> None:
    original.chmod(0o640)
    write_atomically(original, b"x")
    assert stat.S_IMODE(original.stat().st_mode) == 0o640
    original.chmod(0o604)
    write_atomically(original, b"y")
    assert stat.S_IMODE(original.stat().st_mode) == 0o604


def test_replaces_the_file_rather_than_writing_into_it(original: Path) -> None:
    # A reader holding the old file keeps reading the old bytes: nobody sees half a file.
    with open(original, "rb") as reader:
        write_atomically(original, b"replacement")
        assert reader.read() == ORIGINAL
    assert original.read_bytes() == b"replacement"


def test_a_symlink_stays_a_link_and_its_target_changes(tmp_path: Path) -> None:
    target = tmp_path / "real.json"
    target.write_bytes(b"old")
    link = tmp_path / "agent.json"
    link.symlink_to(target.name)
    write_atomically(link, b"new")
    assert link.is_symlink()
    assert target.read_bytes() == b"new"


def test_empty_and_large_contents(tmp_path: Path) -> None:
    path = tmp_path / "f"
    write_atomically(path, b"")
    assert path.read_bytes() == b""
    big = os.urandom(3 * 1024 * 1024)
    write_atomically(path, big)
    assert path.read_bytes() == big


def test_a_failed_rename_leaves_the_original_and_no_temp_file(
    original: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def failing_replace(src: object, dst: object) -> None:
        raise OSError(errno.EIO, "simulated failure")

    monkeypatch.setattr(atomic_write.os, "replace", failing_replace)
    with pytest.raises(OSError, match="simulated failure"):
        write_atomically(original, b"never written")
    assert original.read_bytes() == ORIGINAL
    assert listing(original.parent) == ["agent.json"]


def test_a_full_disk_mid_write_leaves_the_original(
    original: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def failing_fsync(fd: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(atomic_write.os, "fsync", failing_fsync)
    with pytest.raises(OSError, match="No space left"):
        write_atomically(original, b"x" * 100_000)
    assert original.read_bytes() == ORIGINAL
    assert listing(original.parent) == ["agent.json"]


def test_an_interrupt_mid_write_leaves_the_original(
    original: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_fchmod = os.fchmod

    def interrupted(fd: int, mode: int) -> None:
        real_fchmod(fd, mode)
        raise KeyboardInterrupt

    monkeypatch.setattr(atomic_write.os, "fchmod", interrupted)
    with pytest.raises(KeyboardInterrupt):
        write_atomically(original, b"never written")
    assert original.read_bytes() == ORIGINAL
    assert listing(original.parent) == ["agent.json"]


def test_a_folder_that_cannot_be_synced_is_not_a_failed_write(
    original: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        if stat.S_ISDIR(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, "Invalid argument")
        real_fsync(fd)

    monkeypatch.setattr(atomic_write.os, "fsync", fsync)
    write_atomically(original, b"done")
    assert original.read_bytes() == b"done"


def test_syncs_the_file_before_the_rename_and_the_folder_after(
    original: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    events: list[str] = []
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(fd: int) -> None:
        events.append("fsync dir" if stat.S_ISDIR(os.fstat(fd).st_mode) else "fsync file")
        real_fsync(fd)

    def replace(src: str, dst: str) -> None:
        events.append("replace")
        real_replace(src, dst)

    monkeypatch.setattr(atomic_write.os, "fsync", fsync)
    monkeypatch.setattr(atomic_write.os, "replace", replace)
    write_atomically(original, b"ordered")
    assert events == ["fsync file", "replace", "fsync dir"]


def test_a_missing_folder_fails_without_creating_anything(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        write_atomically(tmp_path / "no" / "such" / "file", b"x")
    assert listing(tmp_path) == []
