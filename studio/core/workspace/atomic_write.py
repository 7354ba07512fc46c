"""Replacing a file's contents so that a reader, a crash or a full disk never sees half of it.

The new bytes go to a temporary file in the same folder (so the final rename stays on one file
system), are flushed and synced, take the original file's permission bits, and then replace the
file in one ``os.replace``; the folder is synced last so the rename itself survives a power cut.
On any error before the rename the original is untouched and the temporary file is removed.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from pathlib import Path

_NEW_FILE_MODE = 0o666  # narrowed by the umask, as for any file the user creates


def write_atomically(path: str | os.PathLike[str], data: bytes) -> None:
    """Make ``path`` hold exactly ``data``, all at once or not at all.

    A symbolic link is followed, so the link stays a link and its target gets the new contents.
    A new file gets the usual permissions (0666 less the umask); an existing one keeps its own.
    """
    target = Path(os.path.realpath(path))
    folder = target.parent
    try:
        mode: int | None = stat.S_IMODE(os.stat(target).st_mode)
    except FileNotFoundError:
        mode = None
    fd, temp = _create_temp(folder, target.name)
    try:
        with os.fdopen(fd, "wb") as handle:
            if mode is not None:
                os.fchmod(handle.fileno(), mode)
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise
    _sync_folder(folder)


def _create_temp(folder: Path, name: str) -> tuple[int, Path]:
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
    while True:
        temp = folder / f".{name}.{secrets.token_hex(6)}.tmp"
        try:
            return os.open(temp, flags, _NEW_FILE_MODE), temp
        except FileExistsError:
            continue


def _sync_folder(folder: Path) -> None:
    """Make the rename durable. The new contents are already in place when this runs, so a folder
    that cannot be synced (some file systems refuse) is not a failed write."""
    flags = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0)
    try:
        fd = os.open(folder, flags)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
